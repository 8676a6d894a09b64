"""frontend/tools/nkilib_attention.py's decisions that need neither nki-library nor ncverify:
which cte rows `check` can state (layout, contract and every contract option), why the others
are not checked, where the registered attention_cte has a row's options (bit-identity), and how
`check`'s and `run`'s outputs become a row's status. Run: python3 frontend/tests/nkilib_rows_test.py
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))

import nkilib_attention as rows  # noqa: E402


def config(**changes):
    """A cte row's configuration (cte_row's `config`): attention_cte.py's default layout, bf16,
    no optional feature, Sq = Sk = 1024, bs = bs_kv = 2, lnc 2."""
    c = {"dtype": "bf16", "bs": 2, "bs_kv": 2, "d": 64, "seqlen_q": 1024, "seqlen_kv": 1024,
         "prior": False, "sink": False, "cp": False, "packed": False, "lnc": 2, "scale": 1.0,
         "causal_mask": False, "sliding_window": 0, "tp_q": True, "tp_k": False,
         "tp_out": False, "cache_softmax": False}
    c.update(changes)
    return c


def contract_options(args):
    return [args[i + 1] for i, a in enumerate(args) if a == "--contract-option"]


class Layout(unittest.TestCase):
    def test_tp_flags_choose_each_tensors_order(self):
        self.assertEqual(rows.cte_layout(config()), "q=h,s,d k=h,d,s v=h,s,d out=h,s,d")
        self.assertEqual(rows.cte_layout(config(tp_q=False, tp_k=True, tp_out=True)),
                         "q=h,d,s k=h,s,d v=h,s,d out=h,d,s")


class CheckPlan(unittest.TestCase):
    def test_every_contract_option_is_given_and_the_problem_stated_by_check(self):
        args, why = rows.cte_check_plan(config(dtype="fp32", scale=0.125, lnc=1))
        self.assertIsNone(why)
        self.assertEqual(args[args.index("--contract") + 1], "attention_cte")
        # the contract depends on the dtype alone: the other options at values offered with any
        # dtype (check's AttentionCteContractDependsOnTheDtypeOnly)
        self.assertEqual(contract_options(args),
                         ["causal_mask=true", "sliding_window=off", "sink=off", "dtype=fp32",
                          "lnc=1", "scale=1.0"])
        self.assertEqual(args[args.index("--scale") + 1], "0.125")
        self.assertEqual(args[args.index("--align") + 1], "top-left")
        self.assertNotIn("--causal", args)
        self.assertEqual(args[args.index("--layout") + 1], rows.cte_layout(config()))

    def test_any_scale_is_stated_by_check(self):
        args, why = rows.cte_check_plan(config(scale=0.5))
        self.assertIsNone(why)
        self.assertEqual(args[args.index("--scale") + 1], "0.5")
        self.assertIn("scale=1.0", contract_options(args))

    def test_a_causal_row_states_the_top_left_mask_at_any_lengths(self):
        for sk in (1024, 2048):
            args, why = rows.cte_check_plan(config(causal_mask=True, seqlen_kv=sk))
            self.assertIsNone(why)
            self.assertIn("--causal", args)
            self.assertEqual(args[args.index("--align") + 1], "top-left")

    def test_keys_past_the_threshold_take_the_multi_section_contract(self):
        args, _ = rows.cte_check_plan(config(seqlen_q=2048, seqlen_kv=16384))
        self.assertEqual(args[args.index("--contract") + 1], "attention_cte_multi_section")
        args, _ = rows.cte_check_plan(config(seqlen_q=10240, seqlen_kv=10240))
        self.assertEqual(args[args.index("--contract") + 1], "attention_cte")
        # attention_cte.py counts the prior's length padded to 512 with the active keys
        # (total_seqlen_k): 8192 active keys with a 4096-key prior are taken in sections, and a
        # 10000-key row with a 200-key prior is too (10000 + 512 > 10240); without that the row
        # was judged under the one-section contract and FAILed by a bf16 ulp on peaked inputs.
        for change in (dict(seqlen_kv=8192, prior=True, seqlen_prior=4096),
                       dict(seqlen_kv=10000, prior=True, seqlen_prior=200)):
            args, _ = rows.cte_check_plan(config(**change))
            self.assertEqual(args[args.index("--contract") + 1], "attention_cte_multi_section",
                             change)
        args, _ = rows.cte_check_plan(config(seqlen_kv=8192, prior=True, seqlen_prior=2048))
        self.assertEqual(args[args.index("--contract") + 1], "attention_cte")

    def test_each_optional_input_is_a_layout_role_and_its_flags(self):
        cases = [(dict(sink=True), ["sink=h,b"], []),
                 (dict(prior=True, seqlen_prior=512),
                  ["k_prior=h,d,s", "v_prior=h,s,d", "prior_len=prior_used_len"], []),
                 (dict(prior=True, seqlen_prior=512, tp_k=True), ["k_prior=h,s,d"], []),
                 (dict(cp=True, global_cp_deg=4, cp_strided_q_slicing=False, causal_mask=True),
                  ["q_offset=cp_offset"], ["--cp-degree", "4"]),
                 (dict(cp=True, global_cp_deg=2, cp_strided_q_slicing=True, causal_mask=True),
                  ["q_offset=cp_offset"], ["--cp-degree", "2", "--cp-strided"]),
                 (dict(packed=True), ["key_min=bound_min", "key_max=bound_max"], []),
                 (dict(sliding_window=128, causal_mask=True), [], ["--window", "128"])]
        for change, roles, flags in cases:
            args, why = rows.cte_check_plan(config(**change))
            self.assertIsNone(why, change)
            layout = args[args.index("--layout") + 1].split()
            for r in roles:
                self.assertIn(r, layout, change)
            text = " ".join(args)
            self.assertIn(" ".join(flags), text, change)
        self.assertNotIn("--cp-strided", rows.cte_check_plan(config(
            cp=True, global_cp_deg=4, cp_strided_q_slicing=False))[0])

    def test_cached_statistics_and_fp16_rows_are_checked(self):
        args, why = rows.cte_check_plan(config(cache_softmax=True))
        self.assertIsNone(why)
        layout = args[args.index("--layout") + 1].split()
        self.assertIn("neg_max:out_neg_max=h,seq_part,seq_tile", layout)
        self.assertIn("recip_sum:out_sum_recip=h,seq_part,seq_tile", layout)
        args, why = rows.cte_check_plan(config(dtype="fp16"))
        self.assertIsNone(why)
        self.assertIn("dtype=fp16", args)

    def test_a_dtype_without_a_contract_is_not_checked_and_says_why(self):
        args, why = rows.cte_check_plan(config(dtype="fp8_e4m3"))
        self.assertIsNone(args)
        self.assertIn("dtype fp8_e4m3", why)

    def test_a_non_causal_row_with_other_lengths_is_checked(self):
        args, why = rows.cte_check_plan(config(seqlen_q=512, seqlen_kv=1536))
        self.assertIsNone(why)


class HandTranslation(unittest.TestCase):
    def test_the_registered_kernels_options_and_shape(self):
        kernel, params, why = rows.cte_hand_translation(
            config(bs=4, bs_kv=2, causal_mask=True, sliding_window=256, lnc=1))
        self.assertIsNone(why)
        self.assertEqual(kernel, "attention_cte")
        given = [params[i + 1] for i, a in enumerate(params) if a == "--param"]
        self.assertEqual(given, ["causal_mask=true", "sliding_window=on", "sink=off",
                                 "dtype=bf16", "lnc=1", "scale=1.0", "bs_kv=2", "group=2",
                                 "seqlen=1024", "d_head=64", "window=256"])
        kernel, _, _ = rows.cte_hand_translation(config(seqlen_q=12288, seqlen_kv=12288))
        self.assertEqual(kernel, "attention_cte_multi_section")

    def test_where_the_registered_kernel_lacks_the_rows_options(self):
        cases = [(dict(tp_out=True), "tp_out=True"), (dict(seqlen_q=577, seqlen_kv=577), "577"),
                 (dict(seqlen_kv=2048), "Sq = Sk"), (dict(bs=3, bs_kv=3), "bs_kv <= 2"),
                 (dict(bs=1, bs_kv=1, lnc=2), "bs_kv even"), (dict(dtype="fp16"), "fp16"),
                 (dict(scale=0.5), "scale 0.5"),
                 (dict(sliding_window=128, causal_mask=True), "above 128"),
                 (dict(prior=True), "prefix caching")]
        for change, words in cases:
            kernel, params, why = rows.cte_hand_translation(config(**change))
            self.assertIsNone(kernel, change)
            self.assertIn(words, why, change)


    def test_a_shape_outside_the_domain_moves_into_it_with_the_rows_options(self):
        row = config(bs=1, bs_kv=1, lnc=2, seqlen_q=9216, seqlen_kv=9216, causal_mask=True)
        self.assertIsNone(rows.cte_hand_shape(row)[0])
        probe = rows.cte_domain_config(row)
        self.assertEqual((probe["bs_kv"], probe["bs"], probe["seqlen_q"], probe["seqlen_kv"]),
                         (2, 2, 1024, 1024))
        self.assertEqual(rows.cte_hand_options(probe), rows.cte_hand_options(row))
        self.assertIsNotNone(rows.cte_hand_translation(probe)[0])
        long_keys = rows.cte_domain_config(config(bs=4, bs_kv=1, lnc=1, seqlen_q=2048,
                                                  seqlen_kv=16384, d=256))
        self.assertEqual((long_keys["bs_kv"], long_keys["bs"], long_keys["seqlen_kv"],
                          long_keys["d"]), (1, 2, 10752, 128))


    def test_the_hand_sweep_covers_every_option_value_in_the_registered_domain(self):
        configs = rows.hand_sweep_configs()
        self.assertEqual(len(configs), 64)
        self.assertEqual(len({rows.hand_sweep_id(c) for c in configs}), 64)
        for c in configs:
            kernel, params, why = rows.cte_hand_translation(c)
            self.assertEqual(kernel, "attention_cte", why)
        self.assertEqual({c["scale"] for c in configs}, {1.0, 0.125})
        self.assertEqual({c["sliding_window"] for c in configs}, {0, 256})
        gqa = rows.hand_sweep_configs(rows.parse_hand_shape("4,2,1536,33"))
        self.assertEqual({(c["bs"], c["bs_kv"], c["seqlen_q"], c["seqlen_kv"], c["d"])
                          for c in gqa}, {(4, 2, 1536, 1536, 33)})
        self.assertIn("group=2", " ".join(rows.cte_hand_translation(gqa[0])[1]))
        for bad in ("4,2,1536", "4,2,x,33", "0,2,1536,33"):
            with self.assertRaises(rows.Usage):
                rows.parse_hand_shape(bad)


class KernelArgs(unittest.TestCase):
    def test_the_tensors_the_test_makes_and_the_keyword_arguments(self):
        args = rows.cte_kernel_args(config(tp_q=False, sink=True, seqlen_kv=2048, lnc=1))
        self.assertIn("q=bf16[2,64,1024]", args)
        self.assertIn("k=bf16[2,64,2048]", args)
        self.assertIn("sink=fp32[2,1]", args)
        self.assertIn("k_prior=None", args)
        self.assertNotIn("sink=None", args)
        self.assertIn("tp_q=False", args)
        self.assertEqual(args[-2:], ["--grid", "1"])


class Verdicts(unittest.TestCase):
    def test_check_exit_codes_become_statuses(self):
        self.assertEqual(rows.check_verdict(0, "PASS"), ("checked", "passed"))
        status, line = rows.check_verdict(1, "header\nattention_cte.py: FAIL, worst 3.2\nmore")
        self.assertEqual((status, line), ("failed", "attention_cte.py: FAIL, worst 3.2"))
        self.assertEqual(rows.check_verdict(1, "check x\nUNKNOWN: random values\n"),
                         ("traced", "not checked: UNKNOWN: random values"))
        status, why = rows.check_verdict(2, "ncverify: --contract-option: bad\n")
        self.assertEqual(status, "traced")
        self.assertTrue(why.startswith("not checked: check refused: ncverify: --contract-option"))

    def test_the_contract_line_is_found(self):
        text = ("check x.py like y\ncontract attention_cte with options dtype=bf16 lnc=2 (each "
                "given by --contract-option)\nPASS\n")
        self.assertIn("dtype=bf16", rows.contract_line(text))
        self.assertIsNone(rows.contract_line("check x.py\nPASS\n"))

    def test_unmodelled_tkg_rows_and_an_unmodelled_cte_row_are_not_checked_without_running(self):
        for tkg_cfg, why in ((tkg_config(dtype="float16"), "dtype float16"),
                             (tkg_config(dtype="float32", fp8_kv=True), "fp8 KV with dtype")):
            tkg = {"kernel": "tkg", "status": "traced", "config": tkg_cfg}
            rows.run_check(tkg, "/nonexistent/ncverify", "t.py:f", {}, 1, 1)
            self.assertTrue(tkg["check"].startswith("not checked: " + why), tkg["check"])
            self.assertEqual(tkg["status"], "traced")
        cte = {"kernel": "cte", "status": "traced", "config": config(dtype="fp8_e4m3"),
               "args": []}
        rows.run_check(cte, "/nonexistent/ncverify", "t.py:f", {}, 1, 1)
        self.assertTrue(cte["check"].startswith("not checked: dtype fp8_e4m3"), cte["check"])
        cp = {"kernel": "cte", "status": "traced", "args": [],
              "config": config(cp=True, global_cp_deg=2, cp_strided_q_slicing=False)}
        rows.run_hand_translation(cp, "/nonexistent/ncverify", "t.py:f", {}, 1, 1)
        self.assertTrue(cp["hand"].startswith("not compared: context parallelism"))
        self.assertEqual(cte["status"], "traced")


def tkg_config(**changes):
    """A tkg row's configuration (AttnTKGConfig's fields and the test's parameters), the options
    at the library's defaults."""
    c = {"bs": 4, "q_head": 2, "s_active": 5, "curr_sprior": 1024, "full_sprior": 2048,
         "d_head": 64, "block_len": 0, "tp_k_prior": False, "use_pos_id": False,
         "fuse_rope": False, "out_in_sb": False, "qk_in_sb": True, "strided_mm1": True,
         "dtype": "bfloat16", "test_sink": False, "fp8_kv": False, "sliding_window": 0, "lnc": 1}
    c.update(changes)
    return c


class TkgPlans(unittest.TestCase):
    def options(self, args):
        return [args[i + 1] for i, a in enumerate(args) if a == "--contract-option"]

    def test_a_row_gets_its_layout_and_every_contract_option_at_its_values(self):
        args, why = rows.tkg_check_plan(tkg_config())
        self.assertIsNone(why)
        layout = args[args.index("--layout") + 1]
        self.assertEqual(layout, "q=d,b*h*s k_active=d,b*s v_active=b,h,s,d k_prior=b,h,d,c "
                                 "v_prior=b,h,c,d out=b,h,d,s mask=c,b,h,s")
        self.assertEqual(args[args.index("--contract") + 1], "attention_tkg")
        self.assertEqual(self.options(args), [
            "lnc=1", "strided_mm1=true", "mask=hbm", "sink=off", "kv_dtype=bf16",
            "q_dtype=bf16", "out_dtype=bf16", "s_prior_tiling=off", "block_len=0",
            "block_resize=1", "swa=off", "out_in_sb=false"])

    def test_the_layout_follows_the_rows_options(self):
        args, _ = rows.tkg_check_plan(tkg_config(
            qk_in_sb=False, tp_k_prior=True, out_in_sb=True, use_pos_id=True, test_sink=True,
            strided_mm1=False, curr_sprior=10240))
        layout = args[args.index("--layout") + 1].split()
        for role in ("q=b,h,s,d", "k_active=b,h,s,d", "k_prior=b,h,c,d", "out=d,b*h*s",
                     "mask=a,b,h,s", "positions:rope_pos_ids=b,s", "slots=10240", "sink=h,1"):
            self.assertIn(role, layout)
        opts = self.options(args)
        for o in ("strided_mm1=false", "mask=pos_id", "sink=on", "kv_dtype=bf16",
                  "s_prior_tiling=on", "out_in_sb=true"):
            self.assertIn(o, opts)
        args, _ = rows.tkg_check_plan(tkg_config(use_pos_id=True, sliding_window=256))
        layout = args[args.index("--layout") + 1].split()
        self.assertIn("starts:start_pos_ids=b,s", layout)
        self.assertIn("window=256", layout)
        self.assertIn("swa=on", self.options(args))
        # flash attention only when the library enables it and s_prior passes one 8192-slot tile
        args, _ = rows.tkg_check_plan(tkg_config(curr_sprior=10240,
                                                 enable_fa_s_prior_tiling=False))
        self.assertIn("s_prior_tiling=off", self.options(args))
        args, _ = rows.tkg_check_plan(tkg_config(curr_sprior=8192))
        self.assertIn("s_prior_tiling=off", self.options(args))

    def test_a_fuse_rope_row_states_rope_and_the_scale_it_folds_into_q(self):
        # the positions with a whole mask too (the RoPE positions), rotate_half(x) * sin kept in
        # fp32 when the kernel loads q from HBM, in q's dtype when q is already in SBUF
        args, why = rows.tkg_check_plan(tkg_config(fuse_rope=True, qk_in_sb=False, d_head=128))
        self.assertIsNone(why)
        layout = args[args.index("--layout") + 1].split()
        for role in ("mask=c,b,h,s", "positions:rope_pos_ids=b,s", "inv_freqs=r,1",
                     "rope_products=fp32"):
            self.assertIn(role, layout)
        self.assertAlmostEqual(float(args[args.index("--scale") + 1]), 128 ** -0.5, places=15)
        args, _ = rows.tkg_check_plan(tkg_config(fuse_rope=True, use_pos_id=True))
        layout = args[args.index("--layout") + 1].split()
        self.assertEqual(layout.count("positions:rope_pos_ids=b,s"), 1)
        self.assertIn("rope_products=bf16", layout)
        args, _ = rows.tkg_check_plan(tkg_config())
        self.assertNotIn("--scale", args)


class TkgBlocksAndLnc2(unittest.TestCase):
    def layout(self, c):
        args, why = rows.tkg_check_plan(c)
        self.assertIsNone(why)
        return args[args.index("--layout") + 1].split()

    def test_a_block_row_reads_its_cache_through_the_table(self):
        layout = self.layout(tkg_config(block_len=16, curr_sprior=8192, full_sprior=8192,
                                        strided_mm1=False))
        for role in ("k_prior=n,l,d", "v_prior=n,l,d", "table:active_blocks_table=b,t",
                     "mask=c,b,h,s", "block_mask=16"):
            self.assertIn(role, layout)
        # with positions the mask is the active mask, in no block order
        layout = self.layout(tkg_config(block_len=16, curr_sprior=8192, use_pos_id=True))
        self.assertIn("mask=a,b,h,s", layout)
        self.assertFalse([r for r in layout if r.startswith("block_mask")])

    def test_the_mask_order_takes_the_resized_block_length(self):
        # resize_cache_block_len_for_attention_tkg_kernel: gcd(block_len, s_prior / (cores *
        # 128)), and with FA tiles the 8192-slot tile's 64 and the last tile's remainder / 128
        for changes, want in ((dict(curr_sprior=8192), 16),
                              (dict(curr_sprior=3072), 8),            # 24 folds
                              (dict(curr_sprior=16640), 2),            # FA: last tile 8448 / 128
                              (dict(curr_sprior=10240, lnc=2), 8),     # s_prior split: 40 folds
                              (dict(curr_sprior=10240), 16),           # FA: gcd(80, 64, 16)
                              (dict(curr_sprior=10240, enable_fa_s_prior_tiling=False), 16)):
            c = tkg_config(block_len=16, bs=4, q_head=1, s_active=5, **changes)
            self.assertEqual(rows.tkg_block_mask_len(c), want, changes)

    def test_lnc2_splits_s_prior_or_the_batch_as_the_library_decides(self):
        self.assertEqual(rows.tkg_s_prior_cores(tkg_config(lnc=2)), 2)  # B*H*s_a = 40
        self.assertEqual(rows.tkg_s_prior_cores(tkg_config(lnc=2, bs=64)), 1)  # the batch
        self.assertEqual(rows.tkg_s_prior_cores(tkg_config(lnc=2, curr_sprior=128)), 1)
        self.assertEqual(rows.tkg_s_prior_cores(tkg_config(lnc=1)), 1)
        # FA tiles over the per-core s_prior: 10240 on one core, 5120 on each of two
        self.assertTrue(rows.tkg_uses_fa(tkg_config(curr_sprior=10240)))
        self.assertFalse(rows.tkg_uses_fa(tkg_config(curr_sprior=10240, lnc=2)))
        args, why = rows.tkg_check_plan(tkg_config(lnc=2, curr_sprior=10240))
        self.assertIsNone(why)
        self.assertIn("s_prior_tiling=off", [args[i + 1] for i, a in enumerate(args)
                                             if a == "--contract-option"])


class TkgDtypes(unittest.TestCase):
    def options(self, c):
        args, why = rows.tkg_check_plan(c)
        self.assertIsNone(why)
        return [args[i + 1] for i, a in enumerate(args) if a == "--contract-option"]

    def test_fp8_kv_rows_are_checked_with_fp8_q_as_the_test_casts_it(self):
        # the test casts q to fp8 with the KV cache, so the library's io_type (q.dtype) is fp8:
        # the contract is stated with q_dtype=fp8_e4m3, not the registered kernel's bf16 q
        opts = self.options(tkg_config(fp8_kv=True))
        for o in ("kv_dtype=fp8_e4m3", "q_dtype=fp8_e4m3", "out_dtype=bf16"):
            self.assertIn(o, opts)
        self.assertEqual(rows.tkg_dtypes(tkg_config(fp8_kv=True)),
                         ("fp8_e4m3", "fp8_e4m3", "bf16"))

    def test_fp32_rows_are_checked_all_in_fp32(self):
        opts = self.options(tkg_config(dtype="float32"))
        for o in ("kv_dtype=fp32", "q_dtype=fp32", "out_dtype=fp32"):
            self.assertIn(o, opts)
        opts = self.options(tkg_config())
        for o in ("kv_dtype=bf16", "q_dtype=bf16", "out_dtype=bf16"):
            self.assertIn(o, opts)

    def test_dtypes_the_contract_is_not_stated_for_say_why(self):
        for c, why in ((tkg_config(dtype="float16"), "dtype float16"),
                       (tkg_config(dtype="float32", fp8_kv=True), "asserts q is not fp32")):
            args, reason = rows.tkg_check_plan(c)
            self.assertIsNone(args)
            self.assertIn(why, reason)
        self.assertIsNone(rows.tkg_not_checked(tkg_config(fp8_kv=True)))
        self.assertIsNone(rows.tkg_not_checked(tkg_config(dtype="float32")))


class RunOutputs(unittest.TestCase):
    def test_inputs_are_read_in_program_order(self):
        text = ("kernel k\ninput q : hbm bf16 [2, 512, 64]\ninput k : hbm bf16 [2, 64, 512]\n"
                "output out : hbm bf16 [2, 512, 64]\nbuffer t : sbuf fp32 [128, 1]\n")
        self.assertEqual(rows.input_lines(text), [("bf16", (2, 512, 64)), ("bf16", (2, 64, 512))])
        symbolic = ("input q : hbm bf16 [bs_kv*group, seqlen, d_head]\n"
                    "input k : hbm bf16 [bs_kv, d_head, seqlen]\n")
        values = rows.param_values(["--param", "bs_kv=2", "--param", "group=1", "--param",
                                    "seqlen=512", "--param", "d_head=64", "--param", "sink=off"])
        self.assertEqual(values, {"bs_kv": 2, "group": 1, "seqlen": 512, "d_head": 64})
        self.assertEqual(rows.input_lines(symbolic, values),
                         [("bf16", (2, 512, 64)), ("bf16", (2, 64, 512))])

    def test_checksums_of_a_run_and_of_a_failed_run(self):
        ok = json.dumps({"result": "ok", "outputs": [{"name": "out", "checksum": "ab12"}]})
        self.assertEqual(rows.output_checksums(ok), ["ab12"])
        bad = json.dumps({"result": "dynamic_check_failure", "outputs": []})
        self.assertIsNone(rows.output_checksums(bad))

    def test_a_row_line_names_its_notes(self):
        line = rows.row_line({"id": "cte/x[0]", "status": "traced", "seconds": 1.25,
                              "check": "not checked: sink", "hand": "not compared: sink"})
        self.assertTrue(line.startswith("cte/x[0]"))
        self.assertIn("traced", line)
        self.assertIn("not checked: sink | not compared: sink", line)


if __name__ == "__main__":
    unittest.main()
