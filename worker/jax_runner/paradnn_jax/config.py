"""ModelConfig validation and defaults for the families the JAX runner
builds, and RunSettings defaults: ports of model/model_spec.cc and
common/run_settings.cc over the family table generated from model/family.h
(families.py). Error texts name the field as the C++ runner does
("config.params.layer: ...")."""
import os

from .families import FAMILIES

PRECISIONS = ("float32", "bfloat16", "float16", "mixed_bf16", "mixed_fp16")
OPTIMIZERS = ("rmsprop", "sgd", "momentum")
ALLOWED_PRECISIONS = "|".join(PRECISIONS)
ALLOWED_OPTIMIZERS = "|".join(OPTIMIZERS)

CNN_MIN_IMAGE = 193
MAX_BLOCKS_PER_GROUP = 64
# The families this runner builds; the rest of families.FAMILIES (the one
# table, generated from model/family.h) is built by paradnn-runner only.
BUILT_FAMILIES = ("cnn", "fc", "noop", "rnn")
# Options this runner accepts and that change nothing in it: XLA chooses
# layouts itself (memory_format is a LibTorch knob).
IGNORED_OPTIONS = ("memory_format",)

# common/run_settings.h
DEFAULT_CI = 0.02
DEFAULT_MAX_SECONDS = 10.0
DEFAULT_WARMUP_STEPS = 3
DEFAULT_MIN_STEPS = 5
DEFAULT_MAX_STEPS = 10000
DEFAULT_INTER_OP_THREADS = 1


class ConfigError(Exception):
    """An invalid configuration or run setting; the message names the field."""


class UnsupportedFamily(Exception):
    """A family paradnn-runner builds but this runner does not."""


class Spec:
    """A validated configuration with defaults filled in."""

    def __init__(self, family, params, options, precision, optimizer):
        self.family = family
        self.params = params
        self.options = options
        self.precision = precision
        self.optimizer = optimizer

    @property
    def batch(self):
        return self.params["batch"]

    @property
    def mixed(self):
        return self.precision in ("mixed_bf16", "mixed_fp16")


def _field(group, key):
    return "config.%s.%s" % (group, key) if group else "config.%s" % key


def parse_block_counts(value):
    """Four canonical decimal counts 1..64 separated by commas."""
    parts = value.split(",")
    ok = len(parts) == 4
    counts = []
    for part in parts if ok else []:
        ok = ok and part.isdigit() and part[0] != "0" and str(int(part)) == part and \
            int(part) <= MAX_BLOCKS_PER_GROUP
        if ok:
            counts.append(int(part))
    if not ok:
        raise ConfigError("'%s' is not four comma-separated block counts 1..%d like \"3,4,6,3\""
                          % (value, MAX_BLOCKS_PER_GROUP))
    return counts


def parse_model_spec(config):
    """Validates a v1.ModelConfig; returns a Spec or raises ConfigError /
    UnsupportedFamily."""
    family = config.family.lower()
    if family not in BUILT_FAMILIES:
        if family in FAMILIES:
            raise UnsupportedFamily(
                "family '%s' is built by paradnn-runner (LibTorch) only; the JAX runner builds "
                "%s" % (config.family, ", ".join(BUILT_FAMILIES)))
        raise ConfigError("%s: '%s' is not a family this runner builds; allowed: %s"
                          % (_field("", "family"), config.family, "|".join(sorted(FAMILIES))))
    param_rules = FAMILIES[family]["params"]
    option_rules = FAMILIES[family]["options"]
    names = [r[0] for r in param_rules]
    for key in sorted(config.params):
        if key not in names:
            raise ConfigError("%s: unknown hyper-parameter for family %s; allowed: %s"
                              % (_field("params", key), family, ", ".join(names)))
    params = {}
    for name, lo, hi, required, default, multiple_of in param_rules:
        if name not in config.params:
            if required:
                raise ConfigError("%s: required for family %s (an integer in %d..%d)"
                                  % (_field("params", name), family, lo, hi))
            if default is not None:
                params[name] = default
            continue
        value = config.params[name]
        if value < lo or value > hi:
            raise ConfigError("%s: %d is out of range; allowed %d..%d"
                              % (_field("params", name), value, lo, hi))
        if multiple_of > 1 and value % multiple_of != 0:
            raise ConfigError("%s: %d is not a multiple of %d; allowed %d..%d in multiples of %d"
                              % (_field("params", name), value, multiple_of, lo, hi, multiple_of))
        params[name] = value
    option_names = [r[0] for r in option_rules]
    for key in sorted(config.options):
        if key not in option_names:
            raise ConfigError("%s: unknown option for family %s%s" % (
                _field("options", key), family,
                "; allowed: " + ", ".join(option_names) if option_names else "; it takes none"))
    options = {}
    for name, allowed, default in option_rules:
        if name not in config.options:
            if default is None:
                raise ConfigError("%s: required for family %s%s" % (
                    _field("options", name), family,
                    " (one of %s)" % "|".join(allowed) if allowed else ""))
            value = default
        else:
            value = config.options[name].lower()
        if allowed and value not in allowed:
            raise ConfigError("%s: '%s' is not one of %s"
                              % (_field("options", name), value, "|".join(allowed)))
        if name not in IGNORED_OPTIONS:
            options[name] = value
    precision = config.precision.lower() or "float32"
    if precision not in PRECISIONS:
        raise ConfigError("%s: '%s' is not one of %s"
                          % (_field("", "precision"), config.precision, ALLOWED_PRECISIONS))
    optimizer = config.optimizer.lower() or "rmsprop"
    if optimizer not in OPTIMIZERS:
        raise ConfigError("%s: '%s' is not one of %s"
                          % (_field("", "optimizer"), config.optimizer, ALLOWED_OPTIMIZERS))
    if family == "cnn" and options["blocks"]:
        try:
            parse_block_counts(options["blocks"])
        except ConfigError as e:
            raise ConfigError("%s: %s" % (_field("options", "blocks"), e))
    return Spec(family, params, options, precision, optimizer)


def normalized_config(config):
    """A copy of `config` with the defaults written out (model_spec.cc
    NormalizedConfig); unparseable parts are left as they are."""
    out = type(config)()
    out.CopyFrom(config)
    out.family = config.family.lower()
    try:
        spec = parse_model_spec(config)
        for k, v in spec.params.items():
            out.params[k] = v
        for k, v in spec.options.items():
            out.options[k] = v
    except (ConfigError, UnsupportedFamily):
        pass
    if (config.precision.lower() or "float32") in PRECISIONS:
        out.precision = config.precision.lower() or "float32"
    if (config.optimizer.lower() or "rmsprop") in OPTIMIZERS:
        out.optimizer = config.optimizer.lower() or "rmsprop"
    return out


def _outside(highest):
    """Out of range for a setting whose values run from 0 to `highest`;
    not (value >= 0) rather than value < 0, so that NaN is out too."""
    return lambda value: not value >= 0 or value > highest


def _outside_or_none(lowest, highest, above=False):
    """Out of range for a setting that is 0 (none) or from `lowest` to
    `highest` (excluded with `above`), NaN out."""
    return lambda value: (not value >= 0 or 0 < value < lowest
                          or (value >= highest if above else value > highest))


def validate_run_settings(s):
    """common/run_settings.cc ValidateRunSettings; raises ConfigError.

    The checks run in its order, so the first setting out of range is the one
    named. A result carries every timed step, and the coordinator takes at
    most 100,000 (server/result_validation.h)."""
    checks = (
        ("ci", lambda v: not v >= 0 or v >= 1, "0 < ci < 1 (relative half-width, 0.02 = ±2 %)"),
        ("max_seconds", _outside(86400), "0 < seconds <= 86400"),
        ("warmup_steps", _outside(100000), "1..100000"),
        ("min_steps", _outside(100000), "2..100000"),
        ("min_steps", lambda v: v == 1, "at least 2 (a CI needs two samples)"),
        ("max_steps", _outside(100000), "2..100000"),
        ("max_steps", lambda v: v != 0 and v < max(2, s.min_steps),
         "at least run.min_steps and at least 2"),
        ("intra_op_threads", _outside(1024), "1..1024"),
        ("inter_op_threads", _outside(1024), "1..1024"),
        ("profile_steps", _outside(1000), "1..1000"),
        ("timeout_seconds", _outside(7 * 86400), "0 < seconds <= 604800"),
        ("budget_seconds", _outside_or_none(1, 365 * 86400),
         "1 <= seconds <= 31536000 (a year), or none"),
        ("target_interval", _outside_or_none(0.001, 1, above=True),
         "a fraction 0.001 <= target < 1 (0.03 or 3% = +-3 %), or none"),
    )
    for field, out_of_range, allowed in checks:
        value = getattr(s, field)
        if out_of_range(value):
            # C++ names the budget by its sweep-file key, run.budget.
            name = "budget" if field == "budget_seconds" else field
            raise ConfigError("run.%s: %s is out of range; allowed %s" % (name, value, allowed))


def with_run_defaults(settings):
    """A copy with every zero field replaced by its default
    (common/run_settings.cc WithRunDefaults)."""
    out = type(settings)()
    out.CopyFrom(settings)
    if out.ci == 0:
        out.ci = DEFAULT_CI
    if out.max_seconds == 0:
        out.max_seconds = DEFAULT_MAX_SECONDS
    if out.warmup_steps == 0:
        out.warmup_steps = DEFAULT_WARMUP_STEPS
    if out.min_steps == 0:
        out.min_steps = DEFAULT_MIN_STEPS
    if out.max_steps == 0:
        out.max_steps = DEFAULT_MAX_STEPS
    if out.intra_op_threads == 0:
        out.intra_op_threads = os.cpu_count() or 1
    if out.inter_op_threads == 0:
        out.inter_op_threads = DEFAULT_INTER_OP_THREADS
    return out
