"""`capgap tune allreduce`: measure all-reduce backends here and recommend engine table values."""

from __future__ import annotations

from pathlib import Path

import typer

from capgap.commands import finish
from capgap.output import Format


def register(app: typer.Typer) -> None:
    tune_app = typer.Typer(
        help="Measure collectives on this machine and recommend engine table values.", no_args_is_help=True
    )

    @tune_app.command(
        "allreduce",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        help="Time NCCL and torch symmetric-memory all-reduce (eager and CUDA graph), check them against "
        "NCCL, and write the values `capgap fix --values` reads. Options after `--` go to torchrun "
        "(two nodes: --nproc GPUS -- --nnodes 2 --node-rank N --rdzv-backend c10d --rdzv-endpoint "
        "HOST:PORT on each). Without GPUs: --dist-backend gloo --device cpu.",
    )
    def allreduce(
        ctx: typer.Context,
        nproc: int = typer.Option(..., "--nproc", help="Processes (GPUs) per node."),
        sizes: str = typer.Option("1K:256M", "--sizes", help="START:END (powers of two) or a list 4K,1M."),
        dtype: str = typer.Option("bf16", "--dtype", help="bf16 or fp32."),
        mode: str = typer.Option("both", "--mode", help="eager, graph or both."),
        out: Path | None = typer.Option(None, "--out", help="Output directory (default: a new dated one)."),
        margin: float = typer.Option(0.05, "--margin", help="How much faster symmetric memory must be."),
        allow_multicast: bool = typer.Option(
            False,
            "--allow-multicast",
            help="Let NCCL/torch use NVLink multicast (multimem) when the probe says it is supported.",
        ),
        backend: str = typer.Option(
            "nccl",
            "--dist-backend",
            help="nccl (GPUs), or gloo with --device cpu: the CPU mode, which checks the setup (torchrun, "
            "nodes, output) on a machine without GPUs and measures no values to apply.",
        ),
        device: str = typer.Option("cuda", "--device", help="cuda, or cpu for the CPU mode (with gloo)."),
        repeats: int = typer.Option(20, "--repeats", hidden=True),
        max_iters: int = typer.Option(200, "--max-iters", hidden=True),
        fmt: Format = typer.Option(Format.text, "--format", metavar="<text|json>", help="text or json."),
    ) -> None:
        from capgap.commands import text_or_json
        from capgap.tune.allreduce import tune_allreduce

        text_or_json(fmt, "tune allreduce")
        from capgap.tune.spec import SweepSpec, modes_from_option, parse_sizes

        spec = SweepSpec(
            sizes=parse_sizes(sizes),
            dtype=dtype,
            modes=modes_from_option(mode),
            dist_backend=backend,
            device=device,
            repeats=repeats,
            max_iters=max_iters,
        )
        result = tune_allreduce(spec, nproc, out, margin, list(ctx.args), allow_multicast=allow_multicast)
        from capgap import output
        from capgap.tune import report

        if fmt == Format.json:
            output.emit_json(report.to_json(result))
        elif result.other_node is not None:
            report.render_other_node(result)
        else:
            report.render_text(result)
        finish(1 if result.failed_checks else 0)

    app.add_typer(tune_app, name="tune")
