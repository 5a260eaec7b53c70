"""Tests of the JAX runner: framing, config parsing, the job's counts (the
coordinator's, else `paradnn-runner --describe` when PARADNN_RUNNER names
it), the stopping rules over synthetic step-time streams and the runner's
answer to a job on a host without JAX, none of which needs JAX; and, where
JAX and paradnn-runner are both there, that the FLOPs XLA compiles for a
step agree with the job's counts.

Run by ctest: python3 jax_runner_test.py with PYTHONPATH=build/python,
PARADNN_JAX_RUNNER=build/bin/paradnn_jax_runner.py and, where paradnn-runner
is built, PARADNN_RUNNER=build/bin/paradnn-runner."""
import io
import json
import os
import struct
import subprocess
import unittest

from paradnn.v1 import metrics_pb2, sweep_pb2
from paradnn_jax import config, counts, framing, runner, stop_rule


def make_config(family, precision="", optimizer="", options=None, **params):
    c = sweep_pb2.ModelConfig(family=family, precision=precision, optimizer=optimizer)
    for k, v in params.items():
        c.params[k] = v
    for k, v in (options or {}).items():
        c.options[k] = v
    return c


CONFIGS = [
    make_config("fc", layer=4, node=1024, input=2000, output=200, batch=256),
    make_config("fc", layer=1, node=7, input=3, output=2, batch=1, precision="mixed_bf16"),
    make_config("fc", layer=128, node=8192, input=8000, output=1000, batch=16384),
    make_config("cnn", options={"block_fn": "residual"}, block=2, filter=16, image=200,
                output=500, batch=64),
    make_config("cnn", options={"block_fn": "bottleneck"}, block=8, filter=64, image=300,
                output=1500, batch=1024),
    make_config("cnn", options={"block_fn": "bottleneck", "blocks": "3,4,6,3"}, block=1,
                filter=64, image=224, output=1000, batch=32),
    make_config("rnn", options={"cell": "rnn"}, layer=1, embed=100, length=10, vocab=2, batch=16),
    make_config("rnn", options={"cell": "lstm"}, layer=13, embed=900, length=90, vocab=1024,
                batch=1024),
    make_config("rnn", options={"cell": "gru"}, layer=5, embed=500, length=50, vocab=64,
                batch=64),
]


def has_jax():
    try:
        import jax  # noqa: F401
    except ImportError:
        return False
    return True


def described(c):
    """paradnn-runner --describe's counts of config `c`."""
    out = subprocess.run(counts.describe_argv(os.environ["PARADNN_RUNNER"], c),
                         capture_output=True, check=True)
    return json.loads(out.stdout)


def job_of(c, **counted):
    """A RunnerJob of config `c` carrying the ModelCounts fields `counted`."""
    job = metrics_pb2.RunnerJob()
    job.config.CopyFrom(c)
    job.counts.SetInParent()
    for key, value in counted.items():
        setattr(job.counts, key, value)
    return job


def no_jax():
    raise ImportError("No module named 'jax'")


class FramingTest(unittest.TestCase):
    def test_round_trip_and_wire_format(self):
        event = metrics_pb2.RunnerEvent(log="x" * 70000)  # a length above 2^16
        frame = framing.encode_frame(event)
        payload = event.SerializeToString()
        self.assertEqual(frame[:4], struct.pack("<I", len(payload)))
        self.assertEqual(frame[4:], payload)
        stream = io.BytesIO(frame + frame)
        for _ in range(2):
            got = metrics_pb2.RunnerEvent()
            self.assertTrue(framing.read_frame(stream, got))
            self.assertEqual(got, event)
        self.assertFalse(framing.read_frame(stream, metrics_pb2.RunnerEvent()))

    def test_truncated_and_oversized(self):
        frame = framing.encode_frame(metrics_pb2.RunnerEvent(log="hello"))
        with self.assertRaises(framing.FrameError):
            framing.read_frame(io.BytesIO(frame[:2]), metrics_pb2.RunnerEvent())
        with self.assertRaises(framing.FrameError):
            framing.read_frame(io.BytesIO(frame[:-1]), metrics_pb2.RunnerEvent())
        with self.assertRaises(framing.FrameError):
            framing.read_frame(io.BytesIO(struct.pack("<I", framing.MAX_FRAME_BYTES + 1)),
                               metrics_pb2.RunnerEvent())
        payloads, rest = framing.split_frames(frame + frame[:3])
        self.assertEqual(len(payloads), 1)
        self.assertEqual(rest, frame[:3])


class ConfigTest(unittest.TestCase):
    def test_defaults_and_errors_name_the_field(self):
        spec = config.parse_model_spec(make_config("cnn", options={"block_fn": "Bottleneck"},
                                                   block=1, filter=16, image=200, output=10,
                                                   batch=2))
        self.assertEqual(spec.options, {"block_fn": "bottleneck", "blocks": ""})
        self.assertEqual(spec.precision, "float32")
        self.assertEqual(spec.optimizer, "rmsprop")
        cases = [
            (make_config("fc", layer=4, node=8, input=8, output=2), "config.params.batch"),
            (make_config("fc", layer=0, node=8, input=8, output=2, batch=1),
             "config.params.layer: 0 is out of range"),
            (make_config("fc", layer=1, node=8, input=8, output=2, batch=1, depth=3),
             "config.params.depth: unknown"),
            (make_config("cnn", options={"block_fn": "residual"}, block=1, filter=16, image=100,
                         output=10, batch=2), "config.params.image"),
            (make_config("cnn", options={"block_fn": "residual", "blocks": "3,4,06,3"}, block=1,
                         filter=16, image=200, output=10, batch=2), "config.options.blocks"),
            (make_config("rnn", layer=1, embed=8, length=2, vocab=4, batch=1),
             "config.options.cell: required"),
            (make_config("fc", precision="fp8", layer=1, node=8, input=8, output=2, batch=1),
             "config.precision"),
            (make_config("mlp"), "config.family"),
        ]
        for c, expected in cases:
            with self.assertRaises(config.ConfigError) as e:
                config.parse_model_spec(c)
            self.assertIn(expected, str(e.exception))
        with self.assertRaises(config.UnsupportedFamily):
            config.parse_model_spec(make_config("resnet50", batch=1))

    def test_run_settings(self):
        s = config.with_run_defaults(sweep_pb2.RunSettings())
        self.assertEqual((s.ci, s.max_seconds, s.warmup_steps, s.min_steps, s.max_steps),
                         (0.02, 10.0, 3, 5, 10000))
        with self.assertRaises(config.ConfigError) as e:
            config.validate_run_settings(sweep_pb2.RunSettings(min_steps=1))
        self.assertIn("run.min_steps", str(e.exception))

    def test_run_settings_are_refused_as_the_cpp_runner_refuses_them(self):
        # common/run_settings.cc ValidateRunSettings: same limits, same words.
        cases = (
            (dict(ci=float("nan")), "run.ci: nan is out of range"),
            (dict(min_steps=200000), "run.min_steps: 200000 is out of range; allowed 2..100000"),
            (dict(max_steps=100001), "run.max_steps: 100001 is out of range; allowed 2..100000"),
            (dict(max_seconds=float("nan")), "run.max_seconds: nan is out of range"),
            (dict(budget_seconds=0.5), "run.budget: 0.5 is out of range; allowed 1 <= seconds"),
            (dict(budget_seconds=366 * 86400), "run.budget: 31622400"),
            (dict(target_interval=1.0), "run.target_interval: 1.0 is out of range"),
            (dict(target_interval=0.0001), "run.target_interval: 0.0001 is out of range"),
        )
        for fields, expected in cases:
            with self.subTest(fields=fields):
                with self.assertRaises(config.ConfigError) as e:
                    config.validate_run_settings(sweep_pb2.RunSettings(**fields))
                self.assertIn(expected, str(e.exception))
        for fields in (dict(min_steps=100000), dict(budget_seconds=60), dict(target_interval=0.03)):
            config.validate_run_settings(sweep_pb2.RunSettings(**fields))  # in range


class CountsTest(unittest.TestCase):
    FC_PARAMS = 2001 * 1024 + 3 * 1025 * 1024 + 1025 * 200  # docs/models.md, CONFIGS[0]

    def measure_without_jax(self, job, counting_runner="/nonexistent/paradnn-runner"):
        return runner.run_job(job, lambda *a: None, lambda line: None, counting_runner,
                              import_jax=no_jax)

    def test_the_jobs_counts_are_reported_and_no_others(self):
        job = job_of(CONFIGS[0], params=self.FC_PARAMS, macs_per_example=5, model_flops=7680.0,
                     executed_flops=6000.5, other_flops=9.0, bytes_per_step=11.0,
                     peak_memory_estimate_bytes=13.0)
        m = self.measure_without_jax(job)
        self.assertIn("JAX is not installed", m.error)
        self.assertEqual((m.counts.params, m.counts.macs_per_example, m.counts.model_flops,
                          m.counts.executed_flops), (self.FC_PARAMS, 5, 7680.0, 6000.5))
        # LibTorch's kernel-by-kernel figures are not XLA's: left unknown.
        self.assertEqual((m.counts.other_flops, m.counts.bytes_per_step,
                          m.counts.peak_memory_estimate_bytes), (0, 0, 0))

    def test_a_job_without_counts_and_no_paradnn_runner_is_an_error_naming_both(self):
        job = metrics_pb2.RunnerJob()
        job.config.CopyFrom(CONFIGS[0])
        m = self.measure_without_jax(job)
        self.assertEqual(m.outcome, metrics_pb2.ERROR)
        self.assertIn("the job carries no counts (RunnerJob.counts", m.error)
        self.assertIn("/nonexistent/paradnn-runner --describe", m.error)
        self.assertEqual(m.config.params["node"], 1024)
        self.assertFalse(m.HasField("counts"))

    def test_describe_argv_names_the_model_flags(self):
        c = make_config("cnn", precision="mixed_bf16", optimizer="sgd",
                        options={"block_fn": "residual"}, block=1, filter=16, image=200,
                        output=10, batch=2, intra_op_threads=4)
        self.assertEqual(counts.describe_argv("runner", c),
                         ["runner", "--describe", "--family", "cnn", "--batch", "2", "--block", "1",
                          "--filter", "16", "--image", "200", "--output", "10", "--block_fn",
                          "residual", "--precision", "mixed_bf16", "--optimizer", "sgd"])

    @unittest.skipUnless(os.environ.get("PARADNN_RUNNER"), "PARADNN_RUNNER not set")
    def test_a_job_without_counts_is_counted_by_paradnn_runner(self):
        for c in CONFIGS:
            with self.subTest(config=counts.describe_argv("", c)):
                job = metrics_pb2.RunnerJob()
                job.config.CopyFrom(c)
                m = self.measure_without_jax(job, os.environ["PARADNN_RUNNER"])
                self.assertIn("JAX is not installed", m.error)
                want = described(c)
                for key in counts.REPORTED:
                    self.assertEqual(getattr(m.counts, key), want[key], key)
        m = self.measure_without_jax(metrics_pb2.RunnerJob(config=CONFIGS[0]),
                                     os.environ["PARADNN_RUNNER"])
        self.assertEqual(m.counts.params, self.FC_PARAMS)


class XlaFlopsTest(unittest.TestCase):
    """The FLOPs XLA compiles for one training step agree with the job's
    counts: FC's matmuls are at least the FLOPs the job says the step
    executes (executed_flops; the first layer computes no input gradient);
    a CNN's convolutions at least three quarters of them (XLA may leave out
    the taps that fall on the padding, up to a fifth of a 3x3 conv's on the
    7x7 maps of the last group); and no step above what the job counts with
    its element-wise work (other_flops: bias, activations, batch norm, loss,
    optimizer) by more than half, which XLA's casts and its own way of
    writing batch norm stay well within. The RNN is left out: XLA counts
    the body of its lax.scan once, not once per time step."""
    UPPER = 1.5
    CASES = (  # (config, lowest share of executed_flops XLA counts)
        (make_config("fc", layer=2, node=256, input=128, output=16, batch=32), 1.0),
        (make_config("fc", layer=1, node=64, input=32, output=8, batch=8, optimizer="sgd"), 1.0),
        (make_config("cnn", options={"block_fn": "residual"}, block=1, filter=32, image=193,
                     output=10, batch=2), 0.75),
        (make_config("cnn", options={"block_fn": "bottleneck"}, block=1, filter=32, image=193,
                     output=10, batch=2), 0.75),
    )

    @unittest.skipUnless(has_jax() and os.environ.get("PARADNN_RUNNER"),
                         "needs JAX and PARADNN_RUNNER")
    def test_xla_executes_the_counted_flops(self):
        from paradnn_jax import jax_train
        device = jax_train.select_device("cpu")
        for c, lowest_share in self.CASES:
            with self.subTest(config=counts.describe_argv("", c)):
                want = described(c)
                flops = jax_train.step_flops(config.parse_model_spec(c), 0, device)
                self.assertGreaterEqual(flops, lowest_share * want["executed_flops"])
                self.assertLessEqual(flops,
                                     self.UPPER * (want["executed_flops"] + want["other_flops"]))


class StopRuleTest(unittest.TestCase):
    def test_student_t_and_stats(self):
        self.assertEqual(stop_rule.student_t95(1), 12.7062)
        self.assertAlmostEqual(stop_rule.student_t95(35), 2.0423 + (2.0211 - 2.0423) *
                               (1 / 35 - 1 / 30) / (1 / 40 - 1 / 30))
        s = stop_rule.compute_step_stats([4.0, 1.0, 3.0, 2.0])
        self.assertEqual(s["median_s"], 2.5)
        self.assertAlmostEqual(s["p10_s"], 1.3)
        self.assertAlmostEqual(s["stddev_s"], (5 / 3) ** 0.5)

    def test_warmup_continues_while_steps_settle(self):
        rule = stop_rule.WarmupRule(3, 100.0)
        # Compilation, then slow steps, then settled ones.
        results = [rule.add(x) for x in (10.0, 1.0, 1.0)]
        self.assertEqual(results, [False, False, True])
        rule = stop_rule.WarmupRule(2, 100.0)
        results = [rule.add(x) for x in (1.0, 5.0, 5.0)]
        # After 2: 5 > 1.5 * median(1,5)=4.5 -> continue; 5 <= 1.5*5 -> stop.
        self.assertEqual(results, [False, False, True])
        rule = stop_rule.WarmupRule(2, 1e30)
        stream = [10.0 ** i for i in range(12)]  # never settles
        n = 0
        for x in stream:
            n += 1
            if rule.add(x):
                break
        self.assertEqual(n, rule.max_steps)  # 3 * 2 + 3

    def test_timing_stops_at_ci_then_budget_then_steps(self):
        rule = stop_rule.TimingStopRule(0.02, 100.0, 5, 1000)
        n = 0
        while not rule.add(1.0):
            n += 1
        self.assertEqual((rule.reason, rule.steps), ("ci", 5))
        rule = stop_rule.TimingStopRule(0.001, 3.0, 5, 1000)
        for x in (1.0, 2.0, 1.0):
            rule.add(x)
        self.assertEqual((rule.reason, rule.steps), ("max_seconds", 2))
        rule = stop_rule.TimingStopRule(0.0001, 1e9, 2, 4)
        stream = iter([1.0, 2.0, 1.0, 2.0, 1.0])
        while not rule.add(next(stream)):
            pass
        self.assertEqual((rule.reason, rule.steps), ("max_steps", 4))
        # A block's every step counts against max_seconds (as stop_rule.cc).
        rule = stop_rule.TimingStopRule(0.001, 5.0, 2, 1000)
        for x in (0.25, 0.75):
            rule.add(x, 8)
        self.assertEqual((rule.reason, rule.steps, rule.elapsed_seconds), ("max_seconds", 2, 8.0))

    def test_block_steps(self):
        self.assertEqual(stop_rule.timing_block_steps(2e-3), 1)
        self.assertEqual(stop_rule.timing_block_steps(1e-4), 50)
        self.assertEqual(stop_rule.timing_block_steps(1e-7), 256)
        self.assertEqual(stop_rule.block_steps_for(1e-4, 100, 5), 20)
        # Blocks come from the fastest warm-up step: two stalls of three
        # leave the block as it would be without them (stop_rule.h).
        rule = stop_rule.WarmupRule(3, 0.0)
        self.assertEqual(rule.fastest_seconds(), 0.0)
        for x in (150e-6, 3.4e-3, 3.5e-3):
            rule.add(x)
        self.assertEqual(stop_rule.timing_block_steps(rule.median_seconds()), 1)
        self.assertEqual(stop_rule.timing_block_steps(rule.fastest_seconds()), 34)


class NoJaxJobTest(unittest.TestCase):
    def run_runner(self, job):
        out = subprocess.run([os.environ["PARADNN_JAX_RUNNER"], "--job-stdin"],
                             input=framing.encode_frame(job), capture_output=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        payloads, rest = framing.split_frames(out.stdout)
        self.assertEqual(rest, b"")
        events = []
        for p in payloads:
            e = metrics_pb2.RunnerEvent()
            e.ParseFromString(p)
            events.append(e)
        self.assertEqual([e.WhichOneof("event") for e in events][-1], "result")
        self.assertEqual(sum(e.HasField("result") for e in events), 1)
        return events[-1].result

    def test_job_without_jax_is_a_clear_error_with_config_and_counts(self):
        try:
            import jax  # noqa: F401
            self.skipTest("JAX is installed here")
        except ImportError:
            pass
        job = job_of(CONFIGS[0], params=CountsTest.FC_PARAMS, model_flops=1e9)
        job.device = "cuda"
        m = self.run_runner(job)
        self.assertEqual(m.outcome, metrics_pb2.ERROR)
        self.assertIn("JAX is not installed", m.error)
        self.assertEqual(m.config.params["node"], 1024)
        self.assertEqual(m.config.precision, "float32")
        self.assertEqual((m.counts.params, m.counts.model_flops), (CountsTest.FC_PARAMS, 1e9))
        self.assertEqual(m.device, "cuda")
        out = subprocess.run([os.environ["PARADNN_JAX_RUNNER"], "--platform", "--framed"],
                             capture_output=True)
        self.assertEqual(out.returncode, 3)
        self.assertEqual(out.stdout, b"")
        self.assertIn(b"JAX is not installed", out.stderr)

    def test_data_parallel_replicas_are_the_libtorch_runners(self):
        job = job_of(make_config("fc", layer=1, node=8, input=8, output=2, batch=4, devices=2))
        job.device = "cuda"
        m = self.run_runner(job)
        self.assertEqual(m.outcome, metrics_pb2.UNSUPPORTED)
        self.assertIn("devices 2: the JAX runner measures one device", m.error)
        self.assertEqual(m.config.params["devices"], 2)

    def test_gangs_are_the_libtorch_runners(self):
        # params.hosts > 1 alone, as a sweep asks for it.
        job = job_of(make_config("fc", layer=1, node=8, input=8, output=2, batch=4, hosts=2))
        m = self.run_runner(job)
        self.assertEqual(m.outcome, metrics_pb2.UNSUPPORTED)
        self.assertIn("hosts 2: data-parallel gangs (params.hosts > 1) need the LibTorch runner",
                      m.error)
        self.assertEqual(m.config.params["hosts"], 2)
        # A gang role, as the coordinator sends each rank, even of a noop.
        job = job_of(make_config("noop", batch=1, index=0))
        job.gang.host_rank = 1
        job.gang.hosts = 4
        job.gang.rendezvous_host = "10.0.0.7"
        job.gang.rendezvous_port = 29500
        m = self.run_runner(job)
        self.assertEqual(m.outcome, metrics_pb2.UNSUPPORTED)
        self.assertIn("hosts 4: data-parallel gangs", m.error)
        self.assertIn("need the LibTorch runner", m.error)
        # An empty role still is one.
        job = job_of(make_config("noop", batch=1, index=0))
        job.gang.SetInParent()
        m = self.run_runner(job)
        self.assertEqual(m.outcome, metrics_pb2.UNSUPPORTED)
        self.assertIn("a gang role (rank 0): data-parallel gangs", m.error)
        # hosts 1 is no gang.
        job = job_of(make_config("noop", batch=1, index=0, hosts=1))
        self.assertEqual(self.run_runner(job).outcome, metrics_pb2.OK)

    def test_allreduce_is_the_libtorch_runners(self):
        # The communication roof joins a c10d process group: LibTorch only,
        # refused before any rendezvous, alone or as a rank of a gang.
        job = job_of(make_config("allreduce", bytes=4096, hosts=2))
        job.gang.host_rank = 1
        job.gang.hosts = 2
        m = self.run_runner(job)
        self.assertEqual(m.outcome, metrics_pb2.UNSUPPORTED)
        self.assertIn("family 'allreduce' is built by paradnn-runner (LibTorch) only", m.error)
        m = self.run_runner(job_of(make_config("allreduce", bytes=4096)))
        self.assertEqual(m.outcome, metrics_pb2.UNSUPPORTED)

    def test_config_errors_and_other_families_need_no_jax(self):
        job = metrics_pb2.RunnerJob()
        job.config.CopyFrom(make_config("fc", layer=0, node=8, input=8, output=2, batch=1))
        m = self.run_runner(job)
        self.assertEqual(m.outcome, metrics_pb2.ERROR)
        self.assertIn("config.params.layer", m.error)
        job.config.CopyFrom(make_config("transformer", batch=1))
        self.assertEqual(self.run_runner(job).outcome, metrics_pb2.UNSUPPORTED)
        job = job_of(make_config("noop", batch=1, index=0))
        m = self.run_runner(job)
        self.assertEqual((m.outcome, m.stats.stop_reason), (metrics_pb2.OK, "noop"))

    def test_error_classification(self):
        self.assertEqual(runner.classify_error("XlaRuntimeError: RESOURCE_EXHAUSTED: Out of "
                                               "memory while trying to allocate"), metrics_pb2.OOM)
        self.assertEqual(runner.classify_error("UNIMPLEMENTED: dot bf16"), metrics_pb2.UNSUPPORTED)
        self.assertEqual(runner.classify_error("TypeError: bad"), metrics_pb2.ERROR)


if __name__ == "__main__":
    unittest.main()
