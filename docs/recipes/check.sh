#!/usr/bin/env bash
# Syntax checks of the cluster recipes, run by .ci/run: `bash -n` for the SLURM script, a YAML
# parse (PyYAML) of the Kubernetes manifest with the fields a Deployment needs, and the
# Containerfile's instructions (every line a known instruction, a continuation or a comment;
# FROM first). Exits non-zero naming the first problem.
set -euo pipefail
cd "$(dirname "$0")"

bash -n slurm-workers.sbatch
grep -q '^#SBATCH --gpus-per-task=1$' slurm-workers.sbatch

python3 - <<'PY'
import sys, yaml

with open("k8s-workers.yaml") as f:
    docs = [d for d in yaml.safe_load_all(f) if d is not None]
assert len(docs) == 1, f"expected one manifest, found {len(docs)}"
d = docs[0]
assert d["apiVersion"] == "apps/v1" and d["kind"] == "Deployment", "not an apps/v1 Deployment"
spec = d["spec"]
labels = spec["template"]["metadata"]["labels"]
for k, v in spec["selector"]["matchLabels"].items():
    assert labels.get(k) == v, f"selector {k}={v} does not match the pod's labels"
(c,) = spec["template"]["spec"]["containers"]
assert c["args"][:2] == ["tunable", "worker"], "the container must run `cargo-tunable tunable worker`"
assert all(isinstance(a, str) for a in c["args"]), "every argument must be a string"
assert c["resources"]["limits"]["nvidia.com/gpu"] == 1, "one GPU per pod"

known = {"FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME",
         "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"}
first = None
continued = False
with open("Containerfile") as f:
    for n, line in enumerate(f, 1):
        s = line.strip()
        if not continued and (not s or s.startswith("#")):
            continue
        if not continued:
            word = s.split()[0]
            if word.upper() not in known or word != word.upper():
                sys.exit(f"Containerfile:{n}: unknown instruction {word!r}")
            first = first or word
        continued = s.endswith("\\")
assert not continued, "Containerfile ends inside a continued line"
assert first == "FROM", "a Containerfile starts with FROM (or ARG)"
print("recipes: slurm-workers.sbatch, k8s-workers.yaml and Containerfile pass their checks")
PY
