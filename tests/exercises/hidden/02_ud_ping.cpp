// SPDX-License-Identifier: MIT
// The instructor's own check of exercise 02, kept out of the student edition
// (./lab export --student). It is part of check_02_ud_ping.cpp (included at
// its end, so it uses that file's helpers): ./lab test runs it against the
// solution, ./lab grade --class and the Gradescope package against every
// submission. Worth what grading/points.conf gives "hidden:*".

// Sizes none of the visible checks sends, one after another into fresh slots.
TEST_CASE("hidden: post_ud_send: pings of odd sizes, one after another, each exact",
          "[ex02][hidden]") {
    StudentProgram program("post_ud_send");
    CheckStation station;
    const lab::PeerAddress theirs = station.exchange(program);
    std::size_t slot = 6;
    for (const std::size_t length :
         {std::size_t{2}, std::size_t{13}, std::size_t{999}, station.mtu() - 1}) {
        station.post_receive(slot);
        program.send(Message{"send"}.add(length).add(length * 7).add(kQkey));
        program.receive("sent");
        const ibv_wc wc = station.receive();
        const std::string got = station.slot_bytes(slot, kGrh, length);
        expect(wc.status == IBV_WC_SUCCESS && wc.byte_len == kGrh + length &&
                   wc.src_qp == theirs.qp_num && got == expected_bytes(length * 7, length),
               {"a " + std::to_string(length) + "-byte message from QP " +
                    std::to_string(theirs.qp_num) + ", byte for byte, after a GRH",
                std::to_string(wc.byte_len) + " bytes (GRH included) from QP " +
                    std::to_string(wc.src_qp) +
                    (got == expected_bytes(length * 7, length) ? "" : ", other bytes"),
                "the SGE covers exactly the message, whatever its size"});
        ++slot;
    }
    program.send({"end"});
    program.receive("ended");
    program.finish();
}
