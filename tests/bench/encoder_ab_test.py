#!/usr/bin/env python3
"""bench/encoder_ab.py against a stand-in for bench_encoder_timer whose times and hashes follow its
environment: the table's medians, differences and hash marks, the per-round lines, and a failing
variant's exit code and error."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
AB = os.path.join(HERE, "..", "..", "bench", "encoder_ab.py")

FAKE = r'''#!/usr/bin/env python3
import json, os, sys
if os.environ.get("FAKE_FAIL"):
    print("bench_encoder_timer: error: TF_CUDA_GRAPH=2: expected on or off", file=sys.stderr)
    sys.exit(1)
slow = float(os.environ.get("FAKE_SLOW", "0"))
counter = os.environ["FAKE_COUNTER"]
n = int(open(counter).read()) if os.path.exists(counter) else 0
open(counter, "w").write(str(n + 1))
for case, ms in (("10", 4.0), ("pair 75+10", 5.0)):
    h = os.environ.get("FAKE_HASH", "aaaaaa") + "0000000000"
    print(json.dumps({"impl": "tensorfold", "case": case, "median_ms": ms + slow + 0.01 * n,
                      "repeat_identical": True, "out_hash": h}))
'''


def main():
    with tempfile.TemporaryDirectory() as d:
        fake = os.path.join(d, "fake_bench")
        with open(fake, "w") as f:
            f.write(FAKE)
        os.chmod(fake, 0o755)
        env = {**os.environ, "FAKE_COUNTER": os.path.join(d, "n")}
        p = subprocess.run([sys.executable, AB, "--bench", fake, "--model", d, "--rounds", "2", "base",
                            "slow:FAKE_SLOW=0.5", "other:FAKE_HASH=bbbbbb"], env=env, capture_output=True, text=True)
        out = p.stdout
        assert p.returncode == 0, (p.returncode, out, p.stderr)
        assert out.count("round 1 ") == 3 and out.count("round 2 ") == 3, out
        row = next(line for line in out.splitlines() if line.strip().startswith("10 "))
        # runs 0..5 in order base, slow, other, base, slow, other: base medians 4.00 and 4.03
        assert "4.015" in row, row
        assert "4.525 (+0.510)" in row, row        # slow: 4.51 and 4.54
        assert "4.035 (+0.020) !=" in row, row     # other: 4.02, 4.05, another hash
        assert "!=" not in row.split("4.525")[0], row
        pair = next(line for line in out.splitlines() if line.strip().startswith("pair 75+10"))
        assert "5.015" in pair, pair
        bad = subprocess.run([sys.executable, AB, "--bench", fake, "--model", d, "--rounds", "1", "base",
                              "broken:FAKE_FAIL=1"], env=env, capture_output=True, text=True)
        assert bad.returncode == 1, bad.stdout
        assert "ERRORS: bench_encoder_timer: error: TF_CUDA_GRAPH=2" in bad.stdout, bad.stdout
        missing = subprocess.run([sys.executable, AB, "--bench", fake, "--model", d, "--rounds", "1", "base",
                                  "gone:@" + os.path.join(d, "no_such_bench")], env=env, capture_output=True, text=True)
        assert missing.returncode == 1 and "no_such_bench: No such file" in missing.stdout, missing.stdout
        malformed = subprocess.run([sys.executable, AB, "--bench", fake, "--model", d, "x:NOEQUALS"], env=env,
                                   capture_output=True, text=True)
        assert malformed.returncode != 0 and "is not ENV=VALUE" in malformed.stderr, malformed.stderr
    print("encoder_ab: ok")


if __name__ == "__main__":
    main()
