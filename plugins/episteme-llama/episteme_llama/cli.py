"""``episteme reader serve`` and ``episteme reader check``: options in, one library call, an Outcome.

    episteme reader serve --model F [--mode fuse|generate] [--host 127.0.0.1] [--port 8090]
                          [--slots N] [--token-file F] [--timeout S] [--max-body BYTES] [model options]
    episteme reader check --model F [--mode fuse|generate] [--candidates N] [model options]
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from episteme_core.api import (
    ArgumentParser,
    Command,
    EpistemeError,
    Outcome,
    add_global_options,
    add_int_option,
    float_range,
)
from episteme_llama import defaults

if TYPE_CHECKING:
    from episteme_core.api import Context
    from episteme_llama.options import LlamaOptions

DESCRIPTION = """\
Serve a local GGUF model (llama.cpp) as an episteme reader over HTTP, or check that a model loads
and where it runs (CPU or GPU).

serve speaks the HTTP reader protocol (GET /health, POST /v1/episteme/run, POST /v1/chat/completions
answering {"ids": [...]}), so one GPU host can read for many episteme clients: point their
config.json at it as an http reader. It listens on 127.0.0.1 unless told otherwise; any other
address needs --token-file (a private file holding a bearer token).
"""


def _model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, metavar="FILE", help="the GGUF model file")
    parser.add_argument("--mode", choices=defaults.MODES, default=defaults.DEFAULT_MODE,
                        help="fuse: model relevance mixed with BM25; generate: the model names labels "
                             f"under a grammar (default {defaults.DEFAULT_MODE})")
    add_int_option(parser, "--n-ctx", default=defaults.DEFAULT_N_CTX, low=256, high=1 << 20,
                   help="context size in tokens per slot")
    parser.add_argument("--threads", type=float_range(1, 1024), default=None, metavar="N",
                        help="decode threads per slot (default: the cores divided among the slots)")
    add_int_option(parser, "--n-gpu-layers", default=-1, low=-1, high=100_000,
                   help="layers on the GPU: -1 all (when llama.cpp has a GPU backend), 0 none")
    add_int_option(parser, "--seed", default=0, low=0, high=2**31 - 1, help="seed of the context")
    add_int_option(parser, "--batch-size", default=defaults.DEFAULT_BATCH_SIZE, low=1, high=64,
                   help="fuse: candidates decoded together over the shared prompt prefix")
    add_int_option(parser, "--top", default=defaults.DEFAULT_TOP, low=1, high=50,
                   help="most labels a read names")
    add_int_option(parser, "--max-candidate-tokens", default=defaults.DEFAULT_MAX_CANDIDATE_TOKENS,
                   low=16, high=1 << 20, help="tokens of each candidate the model reads (its start)")
    weight = defaults.DEFAULT_WEIGHT
    parser.add_argument("--weight", type=float_range(0.0, 1.0), default=weight, metavar="W",
                        help=f"fuse: the model's share of the fused score (default {weight})")


def _options_from(args: argparse.Namespace) -> LlamaOptions:
    raw = {"model": args.model, "mode": args.mode, "n_ctx": args.n_ctx, "n_gpu_layers": args.n_gpu_layers,
           "seed": args.seed, "batch_size": args.batch_size, "top": args.top, "weight": args.weight,
           "max_candidate_tokens": args.max_candidate_tokens}
    if args.threads is not None:
        raw["threads"] = int(args.threads)
    from episteme_llama.options import OptionError, parse_options

    try:
        return parse_options(raw)
    except OptionError as exc:
        raise EpistemeError("INVALID_USAGE", str(exc), hint="Run 'episteme reader --help'.") from None


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="reader_action", metavar="ACTION", parser_class=ArgumentParser)
    serve = sub.add_parser("serve", help="serve a GGUF model over the HTTP reader protocol",
                           description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    _model_options(serve)
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1; others need --token-file)")
    add_int_option(serve, "--port", default=defaults.DEFAULT_PORT, low=0, high=65535,
                   help="port to listen on (0 picks a free one)")
    add_int_option(serve, "--slots", default=1, low=1, high=64,
                   help="reads served at once, each in its own context over the one loaded model")
    serve.add_argument("--token-file", metavar="FILE",
                       help="file holding the bearer token clients must send (mode 0600, yours, <= 1 KiB)")
    serve.add_argument("--timeout", type=float_range(0.05, 3600), default=120.0, metavar="S",
                       help="seconds one read may take before it fails (default 120)")
    add_int_option(serve, "--max-body", default=defaults.DEFAULT_MAX_BODY, low=defaults.MIN_MAX_BODY,
                   high=defaults.MAX_MAX_BODY,
                   help="largest request body in bytes")
    add_global_options(serve, suppress=True)
    check = sub.add_parser("check", help="load a GGUF model, say where it runs, and time one read",
                           description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    _model_options(check)
    add_int_option(check, "--candidates", default=8, low=1, high=200,
                   help="paragraphs in the timed read")
    add_global_options(check, suppress=True)


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    action = getattr(args, "reader_action", None)
    if action == "serve":
        return _serve(args, ctx)
    if action == "check":
        return _check(args)
    raise EpistemeError("INVALID_USAGE", "name an action: serve or check",
                        hint="Run 'episteme reader --help'.")


def _serve(args: argparse.Namespace, ctx: Context) -> Outcome:
    from episteme_llama import service

    options = _options_from(args)
    settings = service.settings_for(args.host, args.port, args.token_file, args.max_body, args.slots)

    def announce(event: dict[str, Any]) -> None:
        if ctx.as_json:
            sys.stderr.write(json.dumps(event) + "\n")
        else:
            slots = event["slots"]
            sys.stderr.write(
                f"episteme llama reader on {event['url']}: {event['modelName'] or event['architecture']}, "
                f"mode {event['mode']}, {event['device']} ({event['gpuLayers']} layers on the GPU), "
                f"{slots} slot{'s' if slots != 1 else ''}, {event['auth']} access; Ctrl-C stops it\n")
        sys.stderr.flush()

    data = service.serve(options, settings, slots=args.slots, timeout=args.timeout, announce=announce)
    text = (f"served {data['reads']} read(s) ({data['failed']} failed) on {data['url']} "
            f"in {data['seconds']:g} s; stopped by {data['stopped']}")
    return Outcome(data=data, text=text)


def _check(args: argparse.Namespace) -> Outcome:
    from episteme_llama import service

    data = service.check(_options_from(args), candidates=args.candidates)
    text = (f"{data['modelName'] or data['architecture']} ({data['description']}, "
            f"{data['parameters']:,} parameters) runs on the {data['device'].upper()}"
            f" ({data['gpuLayers']} of {data['layers']} layers offloaded; this llama.cpp "
            f"{'can' if data['gpuOffloadSupported'] else 'cannot'} offload to a GPU)\n"
            f"mode {data['mode']}: loaded in {data['loadSeconds']:g} s; one read of {args.candidates} "
            f"paragraphs took {data['readSeconds']:g} s ({data['tokensPerSecond']:,} tokens/s) "
            f"and named {', '.join(data['labels']) or 'nothing'}\n"
            f"llama.cpp: {data['llamaCpp']}")
    return Outcome(data=data, text=text)


def reader_command() -> Command:
    return Command(
        name="reader",
        help="serve a local GGUF model as a reader over HTTP, or check where a model runs (episteme-llama)",
        configure=configure,
        run=run,
        description=DESCRIPTION,
    )
