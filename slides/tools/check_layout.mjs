// SPDX-License-Identifier: MIT
// The layout check of the rendered slide decks: every slide's content must fit
// its frame, stay clear of the footer, and no text may be smaller than the
// footer (which itself must be at least 16 px). Measured in a real headless
// Chromium on the HTML that Marp wrote, so what is checked is what a class sees.
//
//   node tools/check_layout.mjs [--source-dir DIR] DECK.html...
//
// For each problem it prints one line, "DECK.md:LINE: slide N: what", and the
// exit status is 1 when there was any problem (2 when it could not measure).
// --source-dir is where the decks' Markdown lives (default: the folder above
// this script; a deck in zh-CN/ has its Markdown in zh-CN/ there too); it
// gives each slide its line number in the source.
//
// What counts as a problem, on every slide:
//  - content (a text line, an image, a table, a code block's box) outside the
//    slide's content box: the slide's frame less its padding;
//  - content in the footer band: from the top of the footer or the page
//    number down to the bottom of the slide;
//  - text whose rendered size is below the footer's: computed font size times
//    any scaling on the way (Marp shrinks a code block with a too-long line);
//  - text inside an SVG diagram that is rendered below the footer's size;
//  - a footer or page number below 16 px.
import { readFileSync, existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { launchBrowser } from './browser.mjs';

export const kMinFooterPx = 16;

/** Line numbers (1-based) where each slide of a Marp deck starts. */
export function slideLines(markdown) {
  const lines = markdown.split('\n');
  const starts = [];
  let index = 0;
  if (lines[0]?.trim() === '---') { // front matter
    index = lines.findIndex((line, i) => i > 0 && line.trim() === '---') + 1;
  }
  // A slide starts at its first line that is not blank.
  const firstLine = (from) => {
    let line = from;
    while (line < lines.length && lines[line].trim() === '') ++line;
    return line + 1;
  };
  starts.push(firstLine(index));
  let fence = null;
  for (let i = index; i < lines.length; ++i) {
    const line = lines[i].trim();
    const opening = /^(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (line.startsWith(fence) && line.slice(fence.length).trim() === '') fence = null;
    } else if (opening) {
      fence = opening[1];
    } else if (/^(---|\*\*\*|___)$/.test(line) && (i === 0 || lines[i - 1].trim() === '')) {
      starts.push(firstLine(i + 1));
    }
  }
  return starts;
}

/**
 * Runs in the page: measures every slide (all of them are laid out at once,
 * stacked, in Marp's HTML) and returns the problems found.
 */
function measureInPage(minFooterPx) {
  const problems = [];
  const px = (value) => Math.round(value * 10) / 10;
  const describe = (element) => {
    const text = (element.textContent || element.getAttribute('src') || '').replace(/\s+/g, ' ').trim();
    const name = element.tagName.toLowerCase();
    return text ? `${name} "${text.length > 60 ? `${text.slice(0, 57)}...` : text}"` : name;
  };
  // The total scale from an element's layout to the screen, relative to its slide.
  const scaleOf = (element, slideScale) => {
    const width = element.offsetWidth;
    if (!width) return 1;
    return element.getBoundingClientRect().width / width / slideScale;
  };
  const sections = [...document.querySelectorAll('svg[data-marpit-svg] > foreignObject > section')];
  sections.forEach((section, index) => {
    const slide = index + 1;
    const report = (kind, what) => problems.push({ slide, kind, what });
    const frame = section.getBoundingClientRect();
    const slideScale = frame.width / section.offsetWidth;
    const style = getComputedStyle(section);
    const content = {
      left: frame.left + parseFloat(style.paddingLeft) * slideScale,
      right: frame.right - parseFloat(style.paddingRight) * slideScale,
      top: frame.top + parseFloat(style.paddingTop) * slideScale,
      bottom: frame.bottom - parseFloat(style.paddingBottom) * slideScale,
    };

    // The footer band: the footer element and the page number (section::after).
    let bandTop = Infinity;
    let footerPx = null;
    const footer = section.querySelector(':scope > footer');
    if (footer && footer.textContent.trim()) {
      bandTop = Math.min(bandTop, footer.getBoundingClientRect().top);
      footerPx = parseFloat(getComputedStyle(footer).fontSize) * scaleOf(footer, slideScale);
      if (footerPx < minFooterPx - 0.05) {
        report('footer', `the footer is ${px(footerPx)} px; it must be at least ${minFooterPx} px`);
      }
    }
    const after = getComputedStyle(section, '::after');
    if (section.hasAttribute('data-marpit-pagination') && after.content && after.content !== 'none') {
      const pagePx = parseFloat(after.fontSize);
      const lineHeight = parseFloat(after.lineHeight) || pagePx * 1.2;
      const top = frame.bottom - (parseFloat(after.bottom) + parseFloat(after.paddingBottom) + lineHeight +
        parseFloat(after.paddingTop)) * slideScale;
      bandTop = Math.min(bandTop, top);
      if (pagePx < minFooterPx - 0.05) {
        report('footer', `the page number is ${px(pagePx)} px; it must be at least ${minFooterPx} px`);
      }
      footerPx = footerPx === null ? pagePx : Math.min(footerPx, pagePx);
    }
    const minTextPx = Math.max(footerPx ?? minFooterPx, minFooterPx);
    const bottomLimit = Math.min(content.bottom, bandTop);

    // Everything that shows: text lines, and the boxes of elements.
    const worstByKind = new Map();
    const check = (rect, element, what) => {
      if (rect.width < 0.5 || rect.height < 0.5) return;
      const key = `${element.tagName}:${what}`;
      const tolerance = 0.5;
      let problem = null;
      if (rect.bottom > frame.bottom + tolerance) {
        problem = ['cut', `${what} runs off the bottom of the slide by ${px(rect.bottom - frame.bottom)} px (cut off)`, rect.bottom - frame.bottom];
      } else if (rect.bottom > bandTop + tolerance) {
        problem = ['footer', `${what} overlaps the footer by ${px(rect.bottom - bandTop)} px`, rect.bottom - bandTop];
      } else if (rect.bottom > bottomLimit + tolerance) {
        problem = ['margin', `${what} runs into the bottom margin by ${px(rect.bottom - bottomLimit)} px`, rect.bottom - bottomLimit];
      } else if (rect.right > content.right + tolerance) {
        problem = ['right', `${what} runs past the right edge by ${px(rect.right - content.right)} px`, rect.right - content.right];
      } else if (rect.left < content.left - tolerance) {
        problem = ['left', `${what} starts left of the content by ${px(content.left - rect.left)} px`, content.left - rect.left];
      } else if (rect.top < content.top - tolerance) {
        problem = ['top', `${what} starts above the content by ${px(content.top - rect.top)} px`, content.top - rect.top];
      }
      if (problem) {
        // One line per kind of problem and slide: the worst offender, and how many more.
        const [kind, text, amount] = problem;
        const worst = worstByKind.get(kind);
        if (!worst) worstByKind.set(kind, { text, amount, more: 0, keys: new Set([key]) });
        else if (!worst.keys.has(key)) {
          worst.keys.add(key);
          worst.more += 1;
          if (amount > worst.amount) Object.assign(worst, { text, amount });
        }
      }
    };
    const elements = [...section.querySelectorAll('*')].filter((element) =>
      !element.closest('footer, header') && !(element instanceof SVGElement && element.closest('marp-pre')));
    const smallText = new Map();
    for (const element of elements) {
      const computed = getComputedStyle(element);
      if (computed.display === 'none' || computed.visibility === 'hidden') continue;
      // Block boxes that draw something (code blocks, tables, images, quotes).
      if (['IMG', 'PRE', 'MARP-PRE', 'TABLE', 'BLOCKQUOTE', 'svg'].includes(element.tagName) ||
        computed.backgroundColor !== 'rgba(0, 0, 0, 0)') {
        check(element.getBoundingClientRect(), element, describe(element));
      }
      for (const node of element.childNodes) {
        if (node.nodeType !== Node.TEXT_NODE || !node.textContent.trim()) continue;
        const range = document.createRange();
        range.selectNodeContents(node);
        const lineOf = describe(element);
        for (const rect of range.getClientRects()) check(rect, element, lineOf);
        const size = parseFloat(computed.fontSize) * scaleOf(element, slideScale);
        if (size < minTextPx - 0.05) {
          const owner = element.closest('marp-pre') ? 'a code block shrunk to fit a long line' : describe(element);
          if (!smallText.has(owner) || smallText.get(owner) > size) smallText.set(owner, size);
        }
      }
    }
    for (const [kind, worst] of worstByKind) {
      report(kind, worst.more ? `${worst.text} (and ${worst.more} more)` : worst.text);
    }
    for (const [owner, size] of smallText) {
      report('small', `text ${px(size)} px, smaller than the footer (${px(minTextPx)} px): ${owner}`);
    }

    // Diagrams: the smallest text inside an SVG image, at the size it is shown.
    for (const image of section.querySelectorAll('img')) {
      const diagram = window.__labDiagrams?.[image.getAttribute('src')];
      if (!diagram || !diagram.minFont || !diagram.width) continue;
      // The drawn scale: an image with object-fit: contain fits its box either way.
      const box = image.getBoundingClientRect();
      const drawn = Math.min(box.width / diagram.width, diagram.height ? box.height / diagram.height : Infinity);
      const size = diagram.minFont * drawn / slideScale;
      if (size < minTextPx - 0.05) {
        report('small', `diagram ${image.getAttribute('src')} shows its labels at ${px(size)} px, ` +
          `smaller than the footer (${px(minTextPx)} px): draw it larger or with bigger fonts`);
      }
    }
  });
  return { slides: sections.length, problems };
}

/**
 * The smallest font size in an SVG (Graphviz writes font-size="14.00" on its
 * text) and the SVG's width in the same units: its viewBox times the scale
 * of its top group.
 */
export function svgTextMetrics(svgText) {
  const viewBox = /viewBox="\s*[-\d.]+[\s,]+[-\d.]+[\s,]+([\d.]+)[\s,]+([\d.]+)"/.exec(svgText);
  if (!viewBox) return null;
  const sizes = [...svgText.matchAll(/font-size[=:]\s*"?([\d.]+)/g)].map((match) => parseFloat(match[1]));
  const scale = /<g[^>]*transform="[^"]*scale\(([\d.]+)/.exec(svgText);
  const factor = scale ? parseFloat(scale[1]) : 1;
  return {
    width: parseFloat(viewBox[1]),
    height: parseFloat(viewBox[2]),
    minFont: sizes.length ? Math.min(...sizes) * factor : 0,
  };
}

/** Checks the given HTML decks; returns the problems as lines of text. */
export async function checkDecks(htmlFiles, { sourceDir, minFooterPx = kMinFooterPx, browser } = {}) {
  const ownBrowser = !browser;
  browser ??= await launchBrowser();
  const lines = [];
  let slides = 0;
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    for (const html of htmlFiles) {
      // A Chinese deck's HTML is in zh-CN/, and so is its Markdown.
      const folder = path.basename(path.dirname(html)) === 'zh-CN' ? 'zh-CN' : '';
      const markdownPath = path.join(sourceDir, folder, `${path.basename(html, '.html')}.md`);
      const markdown = existsSync(markdownPath) ? readFileSync(markdownPath, 'utf8') : '';
      const starts = slideLines(markdown);
      const where = (slide) => {
        const real = existsSync(markdownPath) ? realpathSync(markdownPath) : markdownPath;
        const shown = path.relative(process.cwd(), real) || real;
        return starts[slide - 1] ? `${shown}:${starts[slide - 1]}: slide ${slide}` : `${shown}: slide ${slide}`;
      };
      // The SVG images, read from disk next to the HTML (a file:// page may not fetch them).
      const htmlText = readFileSync(html, 'utf8');
      const diagrams = {};
      for (const [, src] of htmlText.matchAll(/<img[^>]*src="([^"]+\.svg)"/g)) {
        const file = path.resolve(path.dirname(html), src);
        if (existsSync(file)) diagrams[src] = svgTextMetrics(readFileSync(file, 'utf8'));
      }
      await page.addInitScript((data) => { window.__labDiagrams = data; }, diagrams);
      await page.goto(pathToFileURL(path.resolve(html)).href, { waitUntil: 'load' });
      // Fonts and Marp's scripts may change the layout after the page loads:
      // measure until two measurements in a row agree.
      await page.evaluate(() => document.fonts.ready);
      let result = null;
      for (let attempt = 0; attempt < 30; ++attempt) {
        await page.waitForTimeout(100);
        const next = await page.evaluate(measureInPage, minFooterPx);
        if (result && JSON.stringify(next) === JSON.stringify(result)) break;
        result = next;
      }
      slides += result.slides;
      if (result.slides === 0) lines.push(`${path.relative(process.cwd(), html)}: no slides found`);
      for (const problem of result.problems) lines.push(`${where(problem.slide)}: ${problem.what}`);
    }
  } finally {
    if (ownBrowser) await browser.close();
  }
  return { slides, lines };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  let sourceDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const files = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--source-dir') sourceDir = path.resolve(args[++i]);
    else files.push(args[i]);
  }
  if (files.length === 0) {
    console.error('usage: node tools/check_layout.mjs [--source-dir DIR] DECK.html...');
    process.exit(2);
  }
  try {
    const { slides, lines } = await checkDecks(files, { sourceDir });
    for (const line of lines) console.log(line);
    if (lines.length) {
      console.log(`layout: ${lines.length} problem(s) on ${slides} slides of ${files.length} deck(s)`);
      process.exit(1);
    }
    console.log(`layout: ${slides} slides of ${files.length} deck(s) fit their frames`);
  } catch (error) {
    console.error(`layout: could not measure the slides: ${error.message}`);
    process.exit(2);
  }
}
