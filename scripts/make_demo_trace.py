"""Make the demo trace: two CPU processes train a small MLP with DDP (gloo) under torch.profiler.

    pip install -r requirements-trace.txt      # torch==2.13.0 (CPU), an optional extra
    python scripts/make_demo_trace.py          # writes data/traces/ddp_gloo_rank{0,1}.json.gz

The app and its tests never import torch: they read the committed .json.gz files.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import socket
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "traces"
WORLD = 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, port: int, steps: int, width: int, tmp: str) -> None:
    """One DDP rank: a few SGD steps of a 4-layer MLP; the profiler records only the last
    `steps`.
    """
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.profiler import ProfilerActivity, profile, schedule

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(
        1
    )  # one compute thread per rank: the gloo thread is then visible beside it
    torch.manual_seed(0)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    model = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(width, width), nn.ReLU())])
    # Small buckets (1 MB) so several all-reduces start during backward and can overlap it.
    ddp = DDP(model, bucket_cap_mb=1)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(rank)  # each rank sees different data, as in real DP
    # wait 1 + warmup 1 step (allocations, gloo pairs connect), then record `steps` steps.
    with profile(
        activities=[ProfilerActivity.CPU],
        record_shapes=False,
        schedule=schedule(wait=1, warmup=1, active=steps),
    ) as prof:
        for _ in range(2 + steps):
            x = torch.randn(64, width, generator=gen)
            loss = ddp(x).pow(2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            prof.step()
    prof.export_chrome_trace(os.path.join(tmp, f"rank{rank}.json"))
    dist.destroy_process_group()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=3, help="profiled steps (default 3)")
    ap.add_argument(
        "--width", type=int, default=512, help="MLP width (default 512: 1 M parameters)"
    )
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    import torch.multiprocessing as mp

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(_worker, args=(_free_port(), args.steps, args.width, tmp), nprocs=WORLD, join=True)
        for rank in range(WORLD):
            trace = json.loads(Path(tmp, f"rank{rank}.json").read_text())
            trace.pop("traceName", None)  # the temporary file's path: nothing to keep
            dest = args.out / f"ddp_gloo_rank{rank}.json.gz"
            # mtime=0: the same trace gives byte-identical files (clean diffs).
            with open(dest, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
                gz.write(json.dumps(trace, separators=(",", ":")).encode())
            n = sum(e.get("ph") == "X" for e in trace.get("traceEvents", []))
            print(
                f"{dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}: "
                f"{dest.stat().st_size / 1e3:.0f} kB, {n} complete events"
            )


if __name__ == "__main__":
    main()
