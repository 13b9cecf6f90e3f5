// SPDX-License-Identifier: MIT
// Prints what a class takes home, with the headless Chromium of browser.mjs:
//  - a handout per deck, NAME-handout.pdf: A4 pages with several slides each,
//    every slide beside its speaker notes (the deck's HTML comments, which
//    Marp's presenter view shows too);
//  - the cheat sheet, cheatsheet.pdf, from its Markdown: it must fit on one
//    page, or this fails.
// A Chinese deck (slides/zh-CN/NAME.md) and the Chinese cheat sheet
// (cheatsheet.zh-CN.md) are printed into DIR/zh-CN/, as Chinese pages.
//
//   node tools/print.mjs --out DIR [--cheatsheet FILE.md]... DECK.md...
//
// The decks are rendered here with marp-core, the theme (theme/lab.css) and
// the options of .marprc.yml, as marp-cli renders them. The HTML goes next to
// the PDFs only while printing (the diagrams' relative paths resolve there).
import { mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Marp } from '@marp-team/marp-core';
import MarkdownIt from 'markdown-it';
import { launchBrowser } from './browser.mjs';

const slidesDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const escapeHtml = (text) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

/** A Marp renderer with the course's theme and the options of .marprc.yml. */
function courseMarp() {
  const marp = new Marp({
    markdown: { breaks: false },
    emoji: { shortcode: false, unicode: false },
    math: false,
    html: false,
    // No print rules of Marp's own (one slide a page): the handout lays out its pages.
    printable: false,
  });
  marp.themeSet.add(readFileSync(path.join(slidesDir, 'theme', 'lab.css'), 'utf8'));
  return marp;
}

/** Speaker notes (Marp's comments of one slide) as HTML paragraphs. */
export function notesHtml(comments) {
  const text = comments.join('\n\n').trim();
  if (!text) return '';
  const inline = new MarkdownIt({ html: false, breaks: false });
  return inline.render(text);
}

/** Where a page goes and in which language: a Chinese one into zh-CN/. */
function edition(file, out) {
  const chinese = path.basename(path.dirname(file)) === 'zh-CN' || file.endsWith('.zh-CN.md');
  return chinese ? { dir: path.join(out, 'zh-CN'), lang: 'zh-CN' } : { dir: out, lang: 'en' };
}

/** The handout's HTML: every slide (as Marp draws it) beside its notes. */
export function handoutHtml(markdown, title, lang = 'en') {
  const marp = courseMarp();
  const { html, css, comments } = marp.render(markdown, { htmlAsArray: true });
  const rows = html.map((slide, index) => `
    <div class="row">
      <div class="slide"><div class="marpit">${slide}</div><div class="number">${index + 1}</div></div>
      <div class="notes">${notesHtml(comments[index] ?? []) || (lang === 'zh-CN' ? '<p class="none">（无备注）</p>' : '<p class="none">(no notes)</p>')}</div>
    </div>`).join('\n');
  return `<!DOCTYPE html><html lang="${lang}"><head><meta charset="utf-8"><title>${escapeHtml(title)} — ${lang === 'zh-CN' ? '讲义' : 'handout'}</title>
<style>${css}</style>
<style>
  @page { size: A4 portrait; margin: 12mm 12mm 14mm; }
  html, body { margin: 0; font-family: 'DejaVu Sans', 'Noto Sans CJK SC', sans-serif; }
  h1.handout { font-size: 13pt; margin: 0 0 4mm; color: #1f5f8b; }
  .row { display: flex; gap: 5mm; break-inside: avoid; margin-bottom: 5mm; align-items: flex-start; }
  .slide { flex: 0 0 104mm; position: relative; }
  .slide .marpit > svg { display: block; width: 104mm; height: auto; border: 0.3mm solid #99a; }
  .slide .number { position: absolute; left: 1mm; top: 1mm; font-size: 7pt; color: #667; }
  .notes { flex: 1; font-size: 9pt; line-height: 1.35; color: #222; }
  .notes p { margin: 0 0 2mm; }
  .notes ul { margin: 0 0 2mm; padding-left: 4mm; }
  .notes code { font-size: 8.5pt; }
  .notes .none { color: #889; font-style: italic; }
</style></head><body>
<h1 class="handout">${escapeHtml(title)}</h1>
${rows}
</body></html>`;
}

/** The cheat sheet's HTML: one A4 landscape page in three columns. */
export function cheatsheetHtml(markdown, lang = 'en') {
  // Doxygen's page anchor ("# Title {#name}") means nothing on paper.
  const body = new MarkdownIt({ html: false, breaks: false }).render(markdown.replace(/\s*\{#[\w-]+\}/g, ''));
  return `<!DOCTYPE html><html lang="${lang}"><head><meta charset="utf-8"><title>RDMA verbs cheat sheet</title>
<style>
  @page { size: A4 landscape; margin: 8mm; }
  html, body { margin: 0; font-family: 'DejaVu Sans', 'Noto Sans CJK SC', sans-serif; font-size: 7.4pt; line-height: 1.25; color: #111; }
  body { column-count: 3; column-gap: 5mm; column-rule: 0.2mm solid #bbc; }
  h1 { column-span: all; font-size: 12pt; margin: 0 0 1.5mm; color: #1f5f8b; }
  h1 + p { column-span: all; margin: 0 0 2mm; }
  h2 { font-size: 8.6pt; margin: 2mm 0 0.8mm; color: #1f5f8b; break-after: avoid; }
  p { margin: 0 0 1mm; }
  ul, ol { margin: 0 0 1mm; padding-left: 3.5mm; }
  li { margin: 0; }
  code { font-family: 'DejaVu Sans Mono', 'Noto Sans Mono CJK SC', monospace; font-size: 6.7pt; }
  pre { margin: 0 0 1mm; padding: 0.8mm 1.2mm; background: #f3f4f7; white-space: pre-wrap; break-inside: avoid; }
  pre code { font-size: 6.5pt; }
  table { border-collapse: collapse; margin: 0 0 1mm; width: 100%; break-inside: avoid; }
  td code, p code { overflow-wrap: anywhere; }
  th, td { border: 0.15mm solid #bbc; padding: 0.3mm 0.8mm; text-align: left; vertical-align: top; }
  th { background: #e8ecf2; }
</style></head><body>
${body}
</body></html>`;
}

/** The number of pages in a PDF that Chromium wrote. */
export function pdfPageCount(buffer) {
  return (buffer.toString('latin1').match(/\/Type\s*\/Page(?![a-zA-Z])/g) ?? []).length;
}

async function printHtml(browser, htmlText, htmlPath, pdfPath) {
  writeFileSync(htmlPath, htmlText);
  try {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(htmlPath).href, { waitUntil: 'load' });
    await page.evaluate(() => document.fonts.ready);
    const pdf = await page.pdf({ path: pdfPath, preferCSSPageSize: true, printBackground: true });
    await page.close();
    return pdf;
  } finally {
    rmSync(htmlPath, { force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  let out = null;
  const cheatsheets = [];
  const decks = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--out') out = path.resolve(args[++i]);
    else if (args[i] === '--cheatsheet') cheatsheets.push(path.resolve(args[++i]));
    else decks.push(path.resolve(args[i]));
  }
  if (!out) {
    console.error('usage: node tools/print.mjs --out DIR [--cheatsheet FILE.md]... DECK.md...');
    process.exit(2);
  }
  let status = 0;
  const browser = await launchBrowser();
  try {
    for (const deck of decks) {
      const name = path.basename(deck, '.md');
      const { dir, lang } = edition(deck, out);
      mkdirSync(dir, { recursive: true });
      const shown = path.relative(out, path.join(dir, `${name}-handout.pdf`));
      const markdown = readFileSync(deck, 'utf8');
      const title = /^title:\s*"?([^"\n]*)"?\s*$/m.exec(markdown)?.[1] ?? name;
      const pdf = await printHtml(browser, handoutHtml(markdown, title, lang),
        path.join(dir, `${name}-handout.html`), path.join(dir, `${name}-handout.pdf`));
      console.log(`slides: ${shown} (${pdfPageCount(pdf)} pages)`);
    }
    for (const cheatsheet of cheatsheets) {
      const { dir, lang } = edition(cheatsheet, out);
      mkdirSync(dir, { recursive: true });
      const shown = path.relative(out, path.join(dir, 'cheatsheet.pdf'));
      const pdf = await printHtml(browser, cheatsheetHtml(readFileSync(cheatsheet, 'utf8'), lang),
        path.join(dir, 'cheatsheet.html'), path.join(dir, 'cheatsheet.pdf'));
      const pages = pdfPageCount(pdf);
      if (pages !== 1) {
        console.error(`slides: ${shown} takes ${pages} pages; it must fit on one (shorten ${path.relative(process.cwd(), cheatsheet)})`);
        status = 1;
      } else {
        console.log(`slides: ${shown} (1 page)`);
      }
    }
  } finally {
    await browser.close();
  }
  process.exit(status);
}
