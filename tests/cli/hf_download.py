#!/usr/bin/env python3
"""Hugging Face ids against a fake cache and a loopback Hub (http.server on 127.0.0.1, a port
the OS picks): cache hits without network, downloads stored as huggingface_hub stores them,
offline mode, 401/403/404, redirects, a redirect loop, a slow and a truncated answer. Nothing
leaves the loopback interface; the server stops itself after 60 s at the latest.

Usage: hf_download.py GPUSEL SOURCE_DIR"""

import http.server
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time

GPUSEL, SOURCE = sys.argv[1], pathlib.Path(sys.argv[2])
CONFIG = (SOURCE / "tests/data/hf/hf-config-qwen3-30b-a3b.json").read_bytes()
COMMIT = "0123456789abcdef0123456789abcdef01234567"
TOKEN = "hf_loopback_test_token"
requests = []


class Hub(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def ok(self):
        self.send(200, CONFIG, [("X-Repo-Commit", COMMIT), ("ETag", '"abc123etag"')])

    def do_GET(self):
        requests.append(self.path)
        org = self.path.split("/")[1]
        auth = self.headers.get("Authorization", "")
        if org == "ok":
            self.ok()
        elif org == "gated":
            if not auth:
                self.send(401, b'{"error":"gated"}')
            elif auth != "Bearer " + TOKEN:
                self.send(403, b'{"error":"no access"}')
            else:
                self.ok()
        elif org == "moved":
            self.send(307, b"", [("Location", "/ok/model/resolve/main/config.json")])
        elif org == "loop":
            self.send(302, b"", [("Location", self.path)])
        elif org == "slow":
            time.sleep(3)  # beyond the test's 1 s timeout; bounded so the server can stop
            try:
                self.ok()
            except OSError:
                pass  # the client gave up, as it should
        elif org == "truncated":
            self.send_response(200)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("Content-Length", str(len(CONFIG)))
            self.end_headers()
            self.wfile.write(CONFIG[:20])
            self.close_connection = True
        elif org == "nocommit":
            self.send(200, CONFIG)
        else:
            self.send(404, b'{"error":"not found"}')


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Timer(60, server.shutdown).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    work = pathlib.Path(tempfile.mkdtemp(prefix="gpusel-hf-"))
    failures = []
    try:
        cache = work / "hub"
        base = {k: v for k, v in os.environ.items()
                if not k.startswith("HF_") and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
        base.update(HF_HUB_CACHE=str(cache), HF_ENDPOINT=endpoint, HF_HUB_DOWNLOAD_TIMEOUT="1",
                    HOME=str(work), NO_PROXY="127.0.0.1")

        def run(args, env=None, expect_rc=0, expect=(), absent=()):
            result = subprocess.run([GPUSEL, *args], env={**base, **(env or {})}, capture_output=True,
                                    text=True, timeout=30)
            text = result.stdout + result.stderr
            if result.returncode != expect_rc or any(e not in text for e in expect) or any(a in text for a in absent):
                failures.append(f"{args} {env}: rc {result.returncode} (wanted {expect_rc}), "
                                f"wanted {expect}, not {absent}; output:\n{text}")
            return text

        # A fake cache tree, as huggingface_hub leaves it: refs/main, a snapshot linking into blobs.
        repo = cache / "models--cached--Model-7B"
        (repo / "refs").mkdir(parents=True)
        (repo / "refs/main").write_text("fedcba9876543210fedcba9876543210fedcba98")
        (repo / "blobs").mkdir()
        (repo / "blobs/1111").write_bytes((SOURCE / "tests/data/hf/hf-config-deepseek-v2.json").read_bytes())
        snap = repo / "snapshots/fedcba9876543210fedcba9876543210fedcba98"
        snap.mkdir(parents=True)
        (snap / "config.json").symlink_to("../../blobs/1111")
        (snap / "quant_config.json").write_text('{"zero_point": true, "q_group_size": 128, "w_bit": 4}')
        served = len(requests)
        run(["models", "show", "cached/Model-7B"], env={"HF_HUB_OFFLINE": "0"},
            expect=["MLA", "revision fedcba9876543210fedcba9876543210fedcba98", "AWQ 4-bit (quant_config.json)"])
        if len(requests) != served:
            failures.append("a cached model went to the network")
        # ModelOpt's NVFP4 export (nvidia/DeepSeek-R1-0528-FP4 style): hf_quant_config.json beside config.json.
        fp4 = cache / "models--cached--Model-FP4"
        (fp4 / "refs").mkdir(parents=True)
        (fp4 / "refs/main").write_text("abcdef0123456789abcdef0123456789abcdef01")
        fp4_snap = fp4 / "snapshots/abcdef0123456789abcdef0123456789abcdef01"
        fp4_snap.mkdir(parents=True)
        (fp4_snap / "config.json").write_bytes((SOURCE / "tests/data/hf/hf-config-deepseek-v2.json").read_bytes())
        (fp4_snap / "hf_quant_config.json").write_text(
            '{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8",'
            ' "group_size": 16, "exclude_modules": ["lm_head"]}}')
        run(["models", "show", "cached/Model-FP4"], env={"HF_HUB_OFFLINE": "1"},
            expect=["quantization: ModelOpt nvfp4 (hf_quant_config.json) → weights nvfp4"])
        # A workload with hf: records the id and revision in the plan.
        workload = work / "w.yaml"
        workload.write_text("name: w\nkind: inference\nmodel: {hf: cached/Model-7B}\n")
        run(["validate", str(workload)], expect=["valid workload"])
        plan = run(["plan", str(workload), "--format", "json"], env={"HF_HUB_OFFLINE": "1"})
        if '"model_revision": "fedcba9876543210fedcba9876543210fedcba98"' not in plan:
            failures.append("the plan does not record the revision:\n" + plan[:2000])

        # Offline and not cached: a clear error, no request.
        served = len(requests)
        run(["models", "show", "ok/model"], env={"HF_HUB_OFFLINE": "1"}, expect_rc=3, expect=["not in the Hugging Face cache"])
        run(["--offline", "models", "show", "ok/model"], expect_rc=3, expect=["offline"])
        if len(requests) != served:
            failures.append("offline mode made a request")
        # Download, stored as huggingface_hub stores it; then served from the cache.
        run(["models", "show", "ok/model"], expect=["128 experts", f"revision {COMMIT}", "downloaded"])
        stored = cache / "models--ok--model"
        if (stored / "refs/main").read_text() != COMMIT or not (stored / f"snapshots/{COMMIT}/config.json").is_symlink() \
                or not (stored / "blobs/abc123etag").is_file():
            failures.append("the download is not stored in huggingface_hub's layout")
        run(["models", "show", "ok/model"], env={"HF_HUB_OFFLINE": "1"}, expect=["128 experts"], absent=["downloaded"])
        # Gated: 401 without a token, 403 with the wrong one, the token file honoured.
        run(["models", "show", "gated/model"], expect_rc=3, expect=["401", "HF_TOKEN"])
        run(["models", "show", "gated/model"], env={"HF_TOKEN": "hf_wrong"}, expect_rc=3, expect=["403", "request it"])
        (work / "token").write_text(TOKEN + "\n")
        run(["models", "show", "gated/model"], env={"HF_HOME": str(work), "HF_HUB_CACHE": str(work / "hub2")},
            expect=["128 experts"])
        run(["models", "show", "missing/model"], expect_rc=3, expect=["404"])
        run(["models", "show", "moved/model"], env={"HF_HUB_CACHE": str(work / "hub3")}, expect=["128 experts"])
        run(["models", "show", "loop/model"], expect_rc=3, expect=["more than 5 redirects"])
        run(["models", "show", "slow/model"], expect_rc=3, expect=["within 1 s"])
        run(["models", "show", "truncated/model"], expect_rc=3, expect=["truncated"])
        run(["models", "show", "nocommit/model"], expect_rc=3, expect=["X-Repo-Commit"])
        # A bad id is refused before any request.
        workload.write_text("name: w\nkind: inference\nmodel: {hf: 'bad--id/x'}\n")
        run(["validate", str(workload)], expect_rc=3, expect=["model.hf:", "'--'"])
    finally:
        server.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    for failure in failures:
        print("FAIL:", failure)
    print(f"hf_download: {len(failures)} failures, {len(requests)} loopback requests")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
