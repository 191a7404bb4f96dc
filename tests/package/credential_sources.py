#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every shipped config works with every S3 credential source: static keys only when given.

    credential_sources.py --source REPO --binary path/to/iggy-s3-sink

The shipped configs: packaging/iggy-s3-sink.yaml (the package's and the Docker image's, with
the variables of packaging/env), docker/k8s/base/iggy-s3-sink.yaml (with the Secret's
variables) and the Helm chart's default config (values.yaml). Each must pass `check-config`
with the environment of each source and no static keys: IRSA (AWS_WEB_IDENTITY_TOKEN_FILE,
AWS_ROLE_ARN), EKS Pod Identity / ECS (AWS_CONTAINER_CREDENTIALS_FULL_URI), a profile
(AWS_PROFILE), an instance profile (nothing); and with static keys when they are given. Half a
pair of keys is refused. The env file, the k8s Secret and the chart's values carry a
commented example for each source, and no active static keys.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import yaml

SOURCES = {
    "irsa": {"AWS_WEB_IDENTITY_TOKEN_FILE": "/var/run/secrets/eks.amazonaws.com/serviceaccount/token",
             "AWS_ROLE_ARN": "arn:aws:iam::111122223333:role/iggy-s3-sink"},
    "pod identity": {"AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://169.254.170.23/v1/credentials",
                     "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": "/var/run/secrets/pods.eks.amazonaws.com/token"},
    "profile": {"AWS_PROFILE": "iggy-s3-sink"},
    "instance profile": {},
    "static keys": {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI-example-secret"},
}
# What a commented example of each source looks like in the env file and the Secret.
EXAMPLES = {"irsa": "AWS_WEB_IDENTITY_TOKEN_FILE", "pod identity": "AWS_CONTAINER_CREDENTIALS_FULL_URI",
            "profile": "AWS_PROFILE", "instance profile": "instance profile", "static keys": "AWS_ACCESS_KEY_ID"}


def check_config(binary, text, env):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
    try:
        base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent"}
        return subprocess.run([binary, "check-config", "--config", f.name], capture_output=True, text=True,
                              env={**base, **env}, timeout=60)
    finally:
        os.unlink(f.name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--binary", required=True)
    a = ap.parse_args()
    src = a.source
    problems = []

    def read(rel):
        return open(os.path.join(src, rel), encoding="utf-8").read()

    secret = yaml.safe_load(read("docker/k8s/base/secret.yaml"))
    chart_config = yaml.safe_load(read("packaging/helm/iggy-s3-sink/values.yaml"))["config"]
    configs = {
        "packaging/iggy-s3-sink.yaml": (read("packaging/iggy-s3-sink.yaml"), {"IGGY_PASSWORD": "pw"}),
        "the Docker image's config": (read("packaging/iggy-s3-sink.yaml"),
                                      {"IGGY_PASSWORD": "pw", "ADMIN_LISTEN": "0.0.0.0:9464"}),
        "docker/k8s/base/iggy-s3-sink.yaml": (read("docker/k8s/base/iggy-s3-sink.yaml"), dict(secret["stringData"])),
        "the Helm chart's values.yaml config": (yaml.safe_dump(chart_config),
                                                {"IGGY_PASSWORD": "pw", "S3_BUCKET": "lake"}),
    }
    for name, (text, env) in configs.items():
        for source, creds in SOURCES.items():
            r = check_config(a.binary, text, {**env, **creds})
            if r.returncode != 0:
                problems.append(f"{name} with {source} credentials: check-config exited {r.returncode}:\n{r.stderr}")
        r = check_config(a.binary, text, {**env, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE"})
        if r.returncode != 78 or "secret_access_key" not in r.stdout + r.stderr:
            problems.append(f"{name}: an access key id without its secret passed check-config (exit {r.returncode})")
        print(f"{name}: {', '.join(SOURCES)}: checked")

    # No active static keys where a role would be overridden, and an example of each source.
    if {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} & set(secret.get("stringData") or {}):
        problems.append("docker/k8s/base/secret.yaml sets static keys: they would come before IRSA in the chain")
    env_file = read("packaging/env")
    if re.search(r"^AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY)=", env_file, re.M):
        problems.append("packaging/env sets static keys")
    for rel in ("packaging/env", "packaging/iggy-s3-sink.yaml", "docker/k8s/base/secret.yaml",
                "packaging/helm/iggy-s3-sink/values.yaml"):
        text = read(rel)
        wanted = EXAMPLES if rel != "packaging/helm/iggy-s3-sink/values.yaml" else {
            "irsa": "irsaRoleArn", "pod identity": "podIdentity", "static keys": "AWS_ACCESS_KEY_ID"}
        if rel == "docker/k8s/base/secret.yaml":
            wanted = {"irsa": "IRSA", "pod identity": "Pod", "static keys": "AWS_ACCESS_KEY_ID"}
        for source, needle in wanted.items():
            if needle not in text:
                problems.append(f"{rel}: no example or word for {source} ({needle})")
    for p in problems:
        print(f"PROBLEM {p}")
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
