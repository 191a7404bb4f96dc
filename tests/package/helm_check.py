#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Helm chart (packaging/helm/iggy-s3-sink) over every values file of tests/package/helm.

    helm_check.py --source REPO --binary path/to/iggy-s3-sink --tools DIR

For each values-*.yaml: `helm lint --strict`, `helm template`, `kubeconform -strict` on the
output against the Kubernetes JSON schemas of the oldest and newest versions the chart
supports (1.25 and 1.37, from PyPI's kubernetes-validate; the Prometheus Operator's kinds
are checked here instead: the PrometheusRule holds packaging/monitoring's rules as they are
and passes `promtool check rules`, the ServiceMonitor selects the metrics Service and its
`admin` port), the dashboard ConfigMap holds the dashboard file, and the objects pass
k8s_check.py's structural checks of the kustomize base (with tests/package/helm/secret.yaml
as the existingSecret). For each bad-*.yaml: `helm template` fails with the text after its
`expect:`. The tools come from scripts/install-deps (DIR: bin/helm, bin/kubeconform,
schemas/). Exit 0 when everything passes, 1 with every problem listed.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

KUBE_VERSIONS = ("1.25.0", "1.37.0")
MONITORING_KINDS = ("ServiceMonitor", "PrometheusRule")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--tools", required=True)
    a = ap.parse_args()
    helm = os.path.join(a.tools, "bin", "helm")
    kubeconform = os.path.join(a.tools, "bin", "kubeconform")
    schemas = os.path.join(a.tools, "schemas")
    missing = [p for p in (helm, kubeconform, schemas) if not os.path.exists(p)]
    if missing:
        print(f"FAIL: {', '.join(missing)} missing: run scripts/install-deps (it installs helm, kubeconform and "
              "the Kubernetes schemas into .cache/tools)")
        return 1
    chart = os.path.join(a.source, "packaging", "helm", "iggy-s3-sink")
    here = os.path.join(a.source, "tests", "package", "helm")
    monitoring = os.path.join(a.source, "packaging", "monitoring")
    rules_file = yaml.safe_load(open(os.path.join(monitoring, "iggy-s3-sink.rules.yaml"), encoding="utf-8"))
    dashboard = open(os.path.join(monitoring, "iggy-s3-sink.dashboard.json"), encoding="utf-8").read()
    problems = []
    good = sorted(glob.glob(os.path.join(here, "values-*.yaml")))
    bad = sorted(glob.glob(os.path.join(here, "bad-*.yaml")))
    if len(good) < 3 or not bad:
        problems.append(f"expected several values-*.yaml and bad-*.yaml in {here}, found {len(good)} and {len(bad)}")
    env = dict(os.environ, HELM_CACHE_HOME=tempfile.mkdtemp(), HELM_CONFIG_HOME=tempfile.mkdtemp(),
               HELM_DATA_HOME=tempfile.mkdtemp())
    seen_kinds = set()
    extra_volumes = 0
    for values in good:
        name = os.path.basename(values)
        r = run([helm, "lint", "--strict", chart, "-f", values], env=env)
        if r.returncode != 0:
            problems.append(f"{name}: helm lint --strict exited {r.returncode}:\n{r.stdout}{r.stderr}")
        r = run([helm, "template", "sink", chart, "-f", values, "--namespace", "lake"], env=env)
        if r.returncode != 0:
            problems.append(f"{name}: helm template exited {r.returncode}:\n{r.stderr}")
            continue
        rendered = r.stdout
        objs = [d for d in yaml.safe_load_all(rendered) if d]
        kinds = sorted(o["kind"] for o in objs)
        seen_kinds.update(kinds)
        problems += check_pdb(name, objs, None)
        for v in KUBE_VERSIONS:
            # Rendered for each version: the chart leaves out fields a server of that version lacks.
            r = run([helm, "template", "sink", chart, "-f", values, "--namespace", "lake", "--kube-version", v],
                    env=env)
            if r.returncode != 0:
                problems.append(f"{name}: helm template --kube-version {v} exited {r.returncode}:\n{r.stderr}")
                continue
            problems += check_pdb(f"{name} (Kubernetes {v})", [d for d in yaml.safe_load_all(r.stdout) if d], v)
            r = run([kubeconform, "-strict", "-summary", "-kubernetes-version", v, "-skip", ",".join(MONITORING_KINDS),
                     "-schema-location",
                     os.path.join(schemas, "{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}",
                                  "{{ .ResourceKind }}{{ .KindSuffix }}.json")],
                    input=r.stdout)
            if r.returncode != 0 or "Errors: 0" not in r.stdout:
                problems.append(f"{name}: kubeconform (Kubernetes {v}) exited {r.returncode}:\n{r.stdout}{r.stderr}")
            elif f"Valid: {len(objs) - sum(k in MONITORING_KINDS for k in kinds)}," not in r.stdout:
                problems.append(f"{name}: kubeconform (Kubernetes {v}) did not validate every object: {r.stdout}")
        problems += check_monitoring(name, objs, rules_file, dashboard)
        problems += check_expectations(name, open(values, encoding="utf-8").read(), objs)
        extra, ps = check_extra_volumes(name, yaml.safe_load(open(values, encoding="utf-8")), objs)
        problems += ps
        extra_volumes += extra
        with tempfile.NamedTemporaryFile("w", suffix=f"-{name}", delete=False) as f:
            f.write(rendered)
        try:
            r = run([sys.executable, os.path.join(a.source, "tests", "package", "k8s_check.py"), "--source", a.source,
                     "--binary", a.binary, "--rendered", f.name, "--extra", os.path.join(here, "secret.yaml")])
        finally:
            os.unlink(f.name)
        if r.returncode != 0:
            problems.append(f"{name}: k8s_check.py:\n{r.stdout}{r.stderr}")
        print(f"{name}: lint, template ({', '.join(kinds)}), kubeconform {' and '.join(KUBE_VERSIONS)}, "
              f"structural checks: {'ok' if not any(p.startswith(name) for p in problems) else 'PROBLEMS'}")
    for k in ("Deployment", "ConfigMap", "Service", "ServiceAccount", "PodDisruptionBudget", *MONITORING_KINDS):
        if k not in seen_kinds:
            problems.append(f"no values file renders a {k}")
    if extra_volumes == 0:
        problems.append("no values file sets extraVolumes: their rendering is not checked")
    for values in bad:
        name = os.path.basename(values)
        m = re.search(r"expect: (.+)$", open(values, encoding="utf-8").read(), re.M)
        if not m:
            problems.append(f"{name}: no `expect:` comment")
            continue
        r = run([helm, "template", "sink", chart, "-f", values], env=env)
        if r.returncode == 0 or m.group(1).strip() not in r.stderr:
            problems.append(f"{name}: helm template exited {r.returncode}, expected a failure naming "
                            f"{m.group(1).strip()!r}:\n{r.stderr}")
        else:
            print(f"{name}: refused: {next((l for l in r.stderr.splitlines() if 'Error' in l), r.stderr)[:200]}")
    for p in problems:
        print(f"PROBLEM {p}")
    print(f"{len(problems)} problems")
    return 1 if problems else 0


def check_extra_volumes(name, values, objs):
    """extraVolumes and extraVolumeMounts render into the Deployment as given, beside the chart's
    config and spool volumes, and every tls.ca_file of the config lies under one of the mounts.
    Returns (how many extra volumes were checked, problems)."""
    dep = next((o for o in objs if o["kind"] == "Deployment"), None)
    volumes, mounts = values.get("extraVolumes") or [], values.get("extraVolumeMounts") or []
    if not dep:
        return 0, []
    ps = dep["spec"]["template"]["spec"]
    got_volumes, got_mounts = ps["volumes"], ps["containers"][0].get("volumeMounts") or []
    problems = []
    for want, got, what in ((volumes, got_volumes, "volume"), (mounts, got_mounts, "volumeMount")):
        for w in want:
            if w not in got:
                problems.append(f"{name}: extra {what} {w} is not in the Deployment: {got}")
        names = [g["name"] for g in got]
        if not {"config", "spool"} <= set(names) or len(names) != len(set(names)) or len(got) != 2 + len(want):
            problems.append(f"{name}: the Deployment's {what}s are {names}, want config, spool and the extra ones")
    config = values.get("config") or {}
    for section in ("s3", "iggy"):
        ca = ((config.get(section) or {}).get("tls") or {}).get("ca_file")
        if ca and not any(ca.startswith(m["mountPath"].rstrip("/") + "/") for m in got_mounts):
            problems.append(f"{name}: {section}.tls.ca_file {ca} is under no volumeMount of the Deployment")
    return len(volumes), problems


def check_pdb(name, objs, kube_version):
    """The PodDisruptionBudget lets a drain evict NotReady pods (unhealthyPodEvictionPolicy
    AlwaysAllow: a store outage makes every pod NotReady by design), on Kubernetes 1.27 and later
    (and helm's default version, None); earlier servers do not know the field."""
    pdb = next((o for o in objs if o["kind"] == "PodDisruptionBudget"), None)
    if not pdb:
        return []
    got = pdb["spec"].get("unhealthyPodEvictionPolicy")
    known = kube_version is None or tuple(map(int, kube_version.split(".")[:2])) >= (1, 27)
    want = "AlwaysAllow" if known else None
    return [] if got == want else [f"{name}: PodDisruptionBudget unhealthyPodEvictionPolicy is {got}, want {want}"]


def job_of(objs):
    """The job label the ServiceMonitor gives the scraped series: the value of its jobLabel on
    the Service it selects (Prometheus Operator), or None without a ServiceMonitor."""
    service = next((o for o in objs if o["kind"] == "Service"), None)
    sm = next((o for o in objs if o["kind"] == "ServiceMonitor"), None)
    if not sm or not service:
        return None
    return (service["metadata"].get("labels") or {}).get(sm["spec"].get("jobLabel"))


def rules_for_job(rules_file, job):
    """packaging/monitoring's rule groups with their scrape job (iggy-s3-sink) replaced by `job`."""
    text = json.dumps(rules_file["groups"])
    if 'job=\\"iggy-s3-sink\\"' not in text:
        raise SystemExit("packaging/monitoring/iggy-s3-sink.rules.yaml no longer names job=\"iggy-s3-sink\": "
                         "update this check and templates/prometheusrule.yaml")
    return json.loads(text.replace('job=\\"iggy-s3-sink\\"', f'job=\\"{job}\\"'))


def check_expectations(name, text, objs):
    """`# expect-memory: Q`, `# expect-spool: Q`, `# expect-termination: N` in a values file:
    the rendered memory request and limit, spool sizeLimit and terminationGracePeriodSeconds
    (worked out by hand from the formulas of docs/operations.md "Sizing" in the file)."""
    problems = []
    dep = next((o for o in objs if o["kind"] == "Deployment"), None)
    if not dep:
        return problems
    ps = dep["spec"]["template"]["spec"]
    c = ps["containers"][0]
    spool = next((v for v in ps["volumes"] if v["name"] == "spool"), {})
    got = {"memory": {(c.get("resources") or {}).get(k, {}).get("memory") for k in ("requests", "limits")},
           "spool": {(spool.get("emptyDir") or {}).get("sizeLimit")},
           "termination": {str(ps.get("terminationGracePeriodSeconds"))}}
    for what, want in re.findall(r"^# expect-(memory|spool|termination): (\S+)$", text, re.M):
        if got[what] != {want}:
            problems.append(f"{name}: {what} rendered as {sorted(map(str, got[what]))}, expected {want}")
    return problems


def check_monitoring(name, objs, rules_file, dashboard):
    problems = []
    service = next((o for o in objs if o["kind"] == "Service"), None)
    job = job_of(objs)
    for o in objs:
        if o["kind"] == "PrometheusRule":
            if not job:
                problems.append(f"{name}: a PrometheusRule without a ServiceMonitor: which job do its rules select?")
            elif o["spec"].get("groups") != rules_for_job(rules_file, job):
                problems.append(f"{name}: the PrometheusRule's groups differ from packaging/monitoring's rules "
                                f"for the ServiceMonitor's job {job!r}")
            for expr_job in re.findall(r'job="([^"]*)"', json.dumps(o["spec"].get("groups"), ensure_ascii=False)
                                       .replace('\\"', '"')):
                if expr_job != job:
                    problems.append(f"{name}: a rule selects job={expr_job!r}, but the ServiceMonitor's job is "
                                    f"{job!r}: that alert would never see the daemon")
            with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
                yaml.safe_dump({"groups": o["spec"]["groups"]}, f)
            try:
                r = run(["promtool", "check", "rules", f.name])
            finally:
                os.unlink(f.name)
            if r.returncode != 0:
                problems.append(f"{name}: promtool check rules on the PrometheusRule: {r.stdout}{r.stderr}")
        elif o["kind"] == "ServiceMonitor":
            sel = o["spec"]["selector"]["matchLabels"]
            labels = service["metadata"].get("labels", {}) if service else {}
            if not service or any(labels.get(k) != v for k, v in sel.items()):
                problems.append(f"{name}: the ServiceMonitor selects no metrics Service")
            elif not labels.get(o["spec"].get("jobLabel")):
                problems.append(f"{name}: the ServiceMonitor's jobLabel {o['spec'].get('jobLabel')!r} is not a label "
                                "of the Service: no job")
            ports = {p.get("name") for p in (service or {}).get("spec", {}).get("ports", [])}
            if any(e.get("port") not in ports or e.get("path") != "/metrics" for e in o["spec"]["endpoints"]):
                problems.append(f"{name}: ServiceMonitor endpoints {o['spec']['endpoints']} are not the Service's "
                                "port and /metrics")
        elif o["kind"] == "ConfigMap" and "iggy-s3-sink.json" in (o.get("data") or {}):
            if json.loads(o["data"]["iggy-s3-sink.json"]) != json.loads(dashboard):
                problems.append(f"{name}: the dashboard ConfigMap differs from packaging/monitoring's dashboard")
            if o["metadata"]["labels"].get("grafana_dashboard") != "1":
                problems.append(f"{name}: the dashboard ConfigMap lacks the grafana_dashboard label")
    return problems


if __name__ == "__main__":
    sys.exit(main())
