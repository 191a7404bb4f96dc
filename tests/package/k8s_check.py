#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Structural check of the Kubernetes manifests in docker/k8s (base and every overlay), or of
objects rendered by another tool (the Helm chart: tests/package/helm_check.py).

    k8s_check.py --source REPO --binary path/to/iggy-s3-sink
    k8s_check.py --source REPO --binary path/to/iggy-s3-sink --rendered OUT.yaml [--extra SECRETS.yaml]

With --rendered the objects of OUT.yaml (plus --extra: objects the cluster holds already, such
as a chart's existingSecret) get the same checks, except the IRSA annotation example (a
chart's ServiceAccount has it only when a role is given).

For each kustomization it renders the objects (the kustomize features the manifests use:
resources, configMapGenerator with files and behavior, strategic-merge patches by path,
images; anything else is refused, so the check never silently ignores a field) and checks:

- every object: the apiVersion of its kind, metadata.name valid for the kind, valid labels,
  no (kind, name) twice, and the fields the API server requires for the kind (selector and
  template of a Deployment, containers with name and image, exactly one handler per probe,
  one source per volume, Job restartPolicy, Service ports, PodDisruptionBudget budget...);
- references: volumes -> ConfigMaps, envFrom -> Secrets, serviceAccountName ->
  ServiceAccount, probe and Service target ports -> named container ports, Service and
  PodDisruptionBudget selectors -> a workload's pod labels;
- against the daemon: the container runs the image's ENTRYPOINT (docker/Dockerfile) with
  `run --config PATH`, PATH is a key of the mounted ConfigMap; that config passes the
  daemon's own `check-config` with the Secret's variables; terminationGracePeriodSeconds is
  above shutdown.grace; the container port named `admin` is admin.listen's port; liveness
  /healthz and readiness /readyz on it; the metrics Service and its prometheus.io/*
  annotations point at it and /metrics; non-root (the Dockerfile's USER), read-only root
  file system, an emptyDir at TMPDIR (the spool directory).

When a `kubectl` is on PATH, `kubectl kustomize` renders each kustomization too and must
give the same objects. Exit 0 when every check passes, 1 with every problem listed.
"""
import argparse
import base64
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

API = {
    "Deployment": "apps/v1",
    "Job": "batch/v1",
    "Service": "v1",
    "ConfigMap": "v1",
    "Secret": "v1",
    "ServiceAccount": "v1",
    "PodDisruptionBudget": "policy/v1",
    "ServiceMonitor": "monitoring.coreos.com/v1",
    "PrometheusRule": "monitoring.coreos.com/v1",
}
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
PORT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$")
VOLUME_SOURCES = {"emptyDir", "configMap", "secret", "persistentVolumeClaim", "projected", "hostPath"}
PROBE_HANDLERS = {"httpGet", "tcpSocket", "exec", "grpc"}
KUSTOMIZATION_KEYS = {"apiVersion", "kind", "resources", "configMapGenerator", "patches", "images"}


class Problems:
    def __init__(self):
        self.items = []

    def add(self, where, what):
        self.items.append(f"{where}: {what}")


# --- rendering ------------------------------------------------------------------------------

def load_docs(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def merge_patch(target, patch):
    """Strategic merge as far as these manifests need it: maps merge, lists of maps with a
    `name` merge by name, other lists are replaced."""
    for k, v in patch.items():
        if k in target and isinstance(target[k], dict) and isinstance(v, dict):
            merge_patch(target[k], v)
        elif (k in target and isinstance(v, list) and isinstance(target[k], list)
              and all(isinstance(x, dict) and "name" in x for x in v + target[k])):
            by_name = {x["name"]: x for x in target[k]}
            for x in v:
                if x["name"] in by_name:
                    merge_patch(by_name[x["name"]], x)
                else:
                    target[k].append(copy.deepcopy(x))
        else:
            target[k] = copy.deepcopy(v)


def render(kdir, problems):
    kfile = os.path.join(kdir, "kustomization.yaml")
    if not os.path.isfile(kfile):
        problems.add(kdir, "no kustomization.yaml")
        return []
    k = load_docs(kfile)[0]
    where = os.path.relpath(kfile)
    for key in set(k) - KUSTOMIZATION_KEYS:
        problems.add(where, f"field {key!r} is not understood by this check (extend k8s_check.py)")
    if k.get("apiVersion") != "kustomize.config.k8s.io/v1beta1" or k.get("kind") != "Kustomization":
        problems.add(where, "apiVersion/kind must be kustomize.config.k8s.io/v1beta1 Kustomization")
    objs = []
    for r in k.get("resources", []):
        p = os.path.normpath(os.path.join(kdir, r))
        if os.path.isdir(p):
            objs += render(p, problems)
        elif os.path.isfile(p):
            objs += load_docs(p)
        else:
            problems.add(where, f"resource {r} does not exist")
    for g in k.get("configMapGenerator", []):
        data = {}
        for f in g.get("files", []):
            key, _, rel = f.rpartition("=") if "=" in f else (os.path.basename(f), "", f)
            p = os.path.join(kdir, rel)
            if not os.path.isfile(p):
                problems.add(where, f"configMapGenerator file {rel} does not exist")
                continue
            data[key] = open(p, encoding="utf-8").read()
        for lit in g.get("literals", []):
            key, _, val = lit.partition("=")
            data[key] = val
        behavior = g.get("behavior", "create")
        existing = [o for o in objs if o.get("kind") == "ConfigMap" and o["metadata"]["name"] == g["name"]]
        if behavior == "create":
            if existing:
                problems.add(where, f"configMapGenerator {g['name']}: exists already (use behavior: replace or merge)")
            objs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": g["name"]}, "data": data})
        elif behavior in ("replace", "merge"):
            if not existing:
                problems.add(where, f"configMapGenerator {g['name']}: behavior {behavior} but no such ConfigMap in the resources")
            else:
                existing[0]["data"] = data if behavior == "replace" else {**existing[0].get("data", {}), **data}
        else:
            problems.add(where, f"configMapGenerator {g['name']}: unknown behavior {behavior}")
    for pt in k.get("patches", []):
        if set(pt) != {"path"}:
            problems.add(where, f"patch {pt}: only `path:` strategic-merge patches are understood by this check")
            continue
        for patch in load_docs(os.path.join(kdir, pt["path"])):
            hits = [o for o in objs if o.get("kind") == patch.get("kind") and
                    o.get("metadata", {}).get("name") == patch.get("metadata", {}).get("name")]
            if len(hits) != 1:
                problems.add(where, f"patch {pt['path']}: matches {len(hits)} objects, expected 1")
                continue
            merge_patch(hits[0], patch)
    for img in k.get("images", []):
        for o in objs:
            for c in pod_containers(o):
                name, _, _ = c.get("image", "").partition(":")
                if name == img["name"]:
                    c["image"] = f"{img.get('newName', img['name'])}:{img.get('newTag', 'latest')}"
                    c.setdefault("_image_name", img["name"])
    return objs


def pod_spec(o):
    if o.get("kind") in ("Deployment", "Job"):
        return (o.get("spec") or {}).get("template", {}).get("spec") or {}
    return None


def pod_containers(o):
    ps = pod_spec(o)
    return (ps.get("containers") or []) + (ps.get("initContainers") or []) if ps else []


# --- checks per kind ------------------------------------------------------------------------

def check_object(o, where, objs, problems):
    kind = o.get("kind")
    if kind not in API:
        problems.add(where, f"kind {kind!r} is not one this check knows")
        return
    if o.get("apiVersion") != API[kind]:
        problems.add(where, f"apiVersion {o.get('apiVersion')!r}, {kind} is {API[kind]}")
    md = o.get("metadata") or {}
    name = md.get("name")
    rule = DNS1035_LABEL if kind == "Service" else DNS1123_SUBDOMAIN
    if not isinstance(name, str) or not rule.match(name) or len(name) > (63 if kind == "Service" else 253):
        problems.add(where, f"metadata.name {name!r} is not a valid {kind} name")
    for lk, lv in (md.get("labels") or {}).items():
        if not isinstance(lv, str) or len(lv) > 63 or not LABEL_VALUE.match(lv):
            problems.add(where, f"label {lk}: value {lv!r} is not a valid label value")
    for ak, av in (md.get("annotations") or {}).items():
        if not isinstance(av, str):
            problems.add(where, f"annotation {ak}: value must be a string, not {type(av).__name__}")
    spec = o.get("spec")
    if kind in ("Deployment", "Job", "Service", "PodDisruptionBudget") and not isinstance(spec, dict):
        problems.add(where, "spec is required")
        return
    if kind == "Deployment":
        sel = (spec.get("selector") or {}).get("matchLabels")
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if not sel:
            problems.add(where, "spec.selector.matchLabels is required (apps/v1)")
        elif any(labels.get(k) != v for k, v in sel.items()):
            problems.add(where, "spec.selector does not match spec.template.metadata.labels")
        if not isinstance(spec.get("replicas", 1), int) or spec.get("replicas", 1) < 0:
            problems.add(where, "spec.replicas must be an integer >= 0")
        check_pod(spec.get("template") or {}, where, objs, problems, restart={"Always"})
    elif kind == "Job":
        check_pod(spec.get("template") or {}, where, objs, problems, restart={"Never", "OnFailure"})
    elif kind == "Service":
        ports = spec.get("ports") or []
        if not ports:
            problems.add(where, "spec.ports needs at least one port")
        targets = selected_pods(spec.get("selector") or {}, objs)
        if not targets:
            problems.add(where, f"spec.selector {spec.get('selector')} selects no pod template")
        for p in ports:
            if not isinstance(p.get("port"), int) or not 0 < p["port"] < 65536:
                problems.add(where, f"port {p}: port must be 1..65535")
            if len(ports) > 1 and not p.get("name"):
                problems.add(where, "every port of a multi-port Service needs a name")
            tp = p.get("targetPort", p.get("port"))
            if isinstance(tp, str) and not any(tp in named_ports(t) for t in targets):
                problems.add(where, f"targetPort {tp!r} is no container port name of the selected pods")
    elif kind == "PodDisruptionBudget":
        if ("minAvailable" in spec) == ("maxUnavailable" in spec):
            problems.add(where, "exactly one of spec.minAvailable and spec.maxUnavailable")
        sel = (spec.get("selector") or {}).get("matchLabels")
        if not sel or not selected_pods(sel, objs):
            problems.add(where, "spec.selector.matchLabels selects no pod template")
    elif kind == "ConfigMap":
        for key, val in (o.get("data") or {}).items():
            if not CONFIG_KEY.match(key):
                problems.add(where, f"data key {key!r} is not valid")
            if not isinstance(val, str):
                problems.add(where, f"data.{key} must be a string")
    elif kind == "Secret":
        for key, val in (o.get("stringData") or {}).items():
            if not CONFIG_KEY.match(key) or not isinstance(val, str):
                problems.add(where, f"stringData.{key}: key must match [-._a-zA-Z0-9]+ and the value be a string")
        for key, val in (o.get("data") or {}).items():
            try:
                base64.b64decode(val, validate=True)
            except Exception:  # noqa: BLE001 - any decoding failure is the finding
                problems.add(where, f"data.{key} is not base64")


def named_ports(template_spec):
    return {p.get("name") for c in template_spec.get("containers") or [] for p in c.get("ports") or []}


def selected_pods(selector, objs):
    out = []
    for o in objs:
        ps = pod_spec(o)
        if ps is None:
            continue
        labels = (o["spec"].get("template", {}).get("metadata") or {}).get("labels") or {}
        if selector and all(labels.get(k) == v for k, v in selector.items()):
            out.append(ps)
    return out


def find(objs, kind, name):
    return next((o for o in objs if o.get("kind") == kind and o.get("metadata", {}).get("name") == name), None)


def check_pod(template, where, objs, problems, restart):
    ps = template.get("spec") or {}
    containers = ps.get("containers") or []
    if not containers:
        problems.add(where, "the pod template needs at least one container")
    if ps.get("restartPolicy", "Always") not in restart:
        problems.add(where, f"restartPolicy must be one of {sorted(restart)}")
    sa = ps.get("serviceAccountName")
    if sa and not find(objs, "ServiceAccount", sa):
        problems.add(where, f"serviceAccountName {sa}: no such ServiceAccount")
    volumes = {}
    for v in ps.get("volumes") or []:
        if not DNS1123_LABEL.match(v.get("name", "")) or v["name"] in volumes:
            problems.add(where, f"volume {v.get('name')!r}: name missing, invalid or twice")
        sources = VOLUME_SOURCES & set(v)
        if len(sources) != 1:
            problems.add(where, f"volume {v.get('name')}: exactly one source, has {sorted(sources)}")
        if "configMap" in v and not find(objs, "ConfigMap", v["configMap"].get("name")):
            problems.add(where, f"volume {v['name']}: no ConfigMap {v['configMap'].get('name')}")
        if "secret" in v and not find(objs, "Secret", v["secret"].get("secretName")):
            problems.add(where, f"volume {v['name']}: no Secret {v['secret'].get('secretName')}")
        volumes[v.get("name")] = v
    names = set()
    for c in containers:
        cw = f"{where} container {c.get('name')}"
        if not DNS1123_LABEL.match(str(c.get("name", ""))) or c.get("name") in names:
            problems.add(cw, "name missing, invalid or twice")
        names.add(c.get("name"))
        if not c.get("image"):
            problems.add(cw, "image is required")
        port_names = set()
        for p in c.get("ports") or []:
            if not isinstance(p.get("containerPort"), int) or not 0 < p["containerPort"] < 65536:
                problems.add(cw, f"containerPort {p.get('containerPort')!r} must be 1..65535")
            n = p.get("name")
            if n is not None:
                if len(n) > 15 or not PORT_NAME.match(n) or not re.search("[a-z]", n) or n in port_names:
                    problems.add(cw, f"port name {n!r}: at most 15 of [a-z0-9-] with a letter, unique")
                port_names.add(n)
        for probe_kind in ("livenessProbe", "readinessProbe", "startupProbe"):
            pr = c.get(probe_kind)
            if pr is None:
                continue
            handlers = PROBE_HANDLERS & set(pr)
            if len(handlers) != 1:
                problems.add(cw, f"{probe_kind}: exactly one handler, has {sorted(handlers)}")
                continue
            h = pr[next(iter(handlers))]
            if "httpGet" in pr and not str(h.get("path", "/")).startswith("/"):
                problems.add(cw, f"{probe_kind}: path must start with /")
            port = h.get("port") if isinstance(h, dict) else None
            if "exec" not in pr and port is None:
                problems.add(cw, f"{probe_kind}: port is required")
            if isinstance(port, str) and port not in port_names:
                problems.add(cw, f"{probe_kind}: port {port!r} is no named port of the container")
        mounts = set()
        for m in c.get("volumeMounts") or []:
            if m.get("name") not in volumes:
                problems.add(cw, f"volumeMount {m.get('name')}: no such volume")
            if not str(m.get("mountPath", "")).startswith("/") or m.get("mountPath") in mounts:
                problems.add(cw, f"volumeMount {m.get('name')}: mountPath missing, relative or twice")
            mounts.add(m.get("mountPath"))
        for e in c.get("envFrom") or []:
            ref = (e.get("secretRef") or {}).get("name")
            if ref and not find(objs, "Secret", ref):
                problems.add(cw, f"envFrom: no Secret {ref}")
            cref = (e.get("configMapRef") or {}).get("name")
            if cref and not find(objs, "ConfigMap", cref):
                problems.add(cw, f"envFrom: no ConfigMap {cref}")
        for e in c.get("env") or []:
            if not e.get("name"):
                problems.add(cw, "env entry without a name")
        res = c.get("resources") or {}
        for section in ("requests", "limits"):
            for rk, rv in (res.get(section) or {}).items():
                if not QUANTITY.match(str(rv)):
                    problems.add(cw, f"resources.{section}.{rk}: {rv!r} is not a quantity")
        req, lim = (res.get("requests") or {}).get("memory"), (res.get("limits") or {}).get("memory")
        if req and lim and quantity(req) > quantity(lim):
            problems.add(cw, "resources: memory request above the limit")


def quantity(q):
    m = re.match(r"^([0-9.]+)([a-zA-Z]*)$", str(q))
    mult = {"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20,
            "Gi": 2**30, "Ti": 2**40}[m.group(2)]
    return float(m.group(1)) * mult


def size_bytes(text):
    """A size as check-config prints it (`960MiB`, `4GiB`, `1000000`) in bytes."""
    m = re.match(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]i?B|B)?\s*$", str(text))
    if not m:
        raise ValueError(f"not a size: {text!r}")
    unit = m.group(2) or "B"
    mult = 1 if unit == "B" else (1024 if "i" in unit else 1000) ** ("KMGT".index(unit[0]) + 1)
    return float(m.group(1)) * mult


# --- the daemon's side ----------------------------------------------------------------------

def duration_s(text):
    total, pos = 0.0, 0
    units = {"ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}
    for m in re.finditer(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)", text):
        if m.start() != pos:
            break
        total += float(m.group(1)) * units[m.group(2)]
        pos = m.end()
    if pos != len(text):
        raise ValueError(f"not a duration: {text!r}")
    return total


def dockerfile_runtime(source):
    out = subprocess.run([sys.executable, os.path.join(source, "tests/package/dockerfile_stage.py"),
                          os.path.join(source, "docker/Dockerfile")], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def memory_floor(mem, s3):
    """The sizing formula of docs/operations.md "Sizing": the container's memory for a config's
    memory.max_buffered and s3.part_size: max_buffered + 2 x part_size + 64 MiB."""
    return (size_bytes(mem.get("max_buffered", "256MiB")) + 2 * size_bytes(s3.get("part_size", "8MiB"))
            + (64 << 20))


def spool_floor(mem):
    """The spool volume for memory.max_spool: max_spool + the spare spool files, min(max_spool / 4, 256 MiB)."""
    s = size_bytes(mem.get("max_spool", "4GiB"))
    return s + min(s / 4, 256 << 20)


def check_sink(objs, where, source, binary, problems, require_irsa=True):
    sinks = [o for o in objs if o.get("kind") == "Deployment" and
             any(c.get("_image_name") == "iggy-s3-sink" for c in pod_containers(o))]
    if len(sinks) != 1:
        problems.add(where, f"expected one Deployment running the iggy-s3-sink image, found {len(sinks)}")
        return
    dep = sinks[0]
    dw = f"{where} Deployment {dep['metadata']['name']}"
    ps = pod_spec(dep)
    c = next(c for c in ps["containers"] if c.get("_image_name") == "iggy-s3-sink")
    image = dockerfile_runtime(source)

    # What runs: the image's ENTRYPOINT with `run --config PATH`.
    if "command" in c and c["command"] != image["entrypoint"]:
        problems.add(dw, f"command {c['command']} differs from the image's ENTRYPOINT {image['entrypoint']}")
    args = c.get("args") or image["cmd"]
    if args[:1] != ["run"] or "--config" not in args:
        problems.add(dw, f"args {args}: expected run --config PATH")
        return
    cfg_path = args[args.index("--config") + 1]
    mount = next((m for m in c.get("volumeMounts") or [] if m["mountPath"] == os.path.dirname(cfg_path)), None)
    vol = next((v for v in ps.get("volumes") or [] if mount and v["name"] == mount["name"]), None)
    cm = find(objs, "ConfigMap", vol["configMap"]["name"]) if vol and "configMap" in vol else None
    if not cm or os.path.basename(cfg_path) not in (cm.get("data") or {}):
        problems.add(dw, f"--config {cfg_path}: not a key of a ConfigMap mounted at {os.path.dirname(cfg_path)}")
        return
    cfg_text = cm["data"][os.path.basename(cfg_path)]
    cfg = yaml.safe_load(cfg_text) or {}

    # Its environment: the Secret(s) of envFrom plus env.
    env = {}
    for e in c.get("envFrom") or []:
        s = find(objs, "Secret", (e.get("secretRef") or {}).get("name"))
        if s:
            env.update(s.get("stringData") or {})
            env.update({k: base64.b64decode(v).decode() for k, v in (s.get("data") or {}).items()})
    for e in c.get("env") or []:
        ref = (e.get("valueFrom") or {}).get("secretKeyRef")
        if ref:
            s = find(objs, "Secret", ref.get("name")) or {}
            val = (s.get("stringData") or {}).get(ref.get("key"))
            if val is None and ref.get("key") in (s.get("data") or {}):
                val = base64.b64decode(s["data"][ref["key"]]).decode()
            if val is None:
                problems.add(dw, f"env {e['name']}: no key {ref.get('key')} in a Secret {ref.get('name')}")
            env[e["name"]] = val or ""
        else:
            env[e["name"]] = e.get("value", "")
    for var in re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", " ".join(scalars(cfg))):
        if var not in env:
            problems.add(dw, f"the config needs ${{{var}}}, which neither the Secret nor env sets")

    # The daemon's own validation of that config, with that environment.
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(cfg_text)
    try:
        r = subprocess.run([binary, "check-config", "--config", f.name], capture_output=True, text=True,
                           env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env})
    finally:
        os.unlink(f.name)
    if r.returncode != 0:
        problems.add(dw, f"check-config on the ConfigMap's config exited {r.returncode}:\n{r.stderr}")
    # The sizes and durations below as the daemon read them: check-config prints the effective
    # config with every size in one form (8MiB, or bytes) and every duration in its shortest
    # one (1m30s), whatever the file wrote (1.5m, 268435456, 256 mib): the daemon's own parser,
    # not a second one here.
    eff = cfg
    if r.returncode == 0:
        eff = yaml.safe_load("\n".join(l for l in r.stdout.splitlines() if not l.startswith("#"))) or cfg
    for secret in (v for k, v in env.items() if "SECRET" in k or "PASSWORD" in k):
        if secret and secret in r.stdout + r.stderr:
            problems.add(dw, "check-config printed a secret from the Secret")

    # Stop: the pod gets longer than shutdown.grace to upload and commit.
    grace = duration_s(str((eff.get("shutdown") or {}).get("grace", "30s")))
    tgps = ps.get("terminationGracePeriodSeconds", 30)
    if not tgps > grace:
        problems.add(dw, f"terminationGracePeriodSeconds {tgps} must be above shutdown.grace ({grace:g}s)")

    # The admin port: admin.listen, the probes, the metrics Service.
    listen = str((cfg.get("admin") or {}).get("listen", ""))
    m = re.match(r"^(\[[^\]]+\]|[^:]*):([0-9]+)$", listen)
    if not m:
        problems.add(dw, f"admin.listen {listen!r}: expected host:port (the probes and /metrics need it)")
        return
    host, port = m.group(1), int(m.group(2))
    if host in ("127.0.0.1", "localhost", "[::1]"):
        problems.add(dw, f"admin.listen {listen}: loopback is out of the kubelet's and Prometheus' reach")
    admin = next((p for p in c.get("ports") or [] if p.get("name") == "admin"), None)
    if not admin or admin.get("containerPort") != port:
        problems.add(dw, f"container port `admin` must be admin.listen's port {port}")
    for probe_kind, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        h = (c.get(probe_kind) or {}).get("httpGet") or {}
        if h.get("path") != path or h.get("port") not in ("admin", port):
            problems.add(dw, f"{probe_kind} must be httpGet {path} on port admin, is {c.get(probe_kind)}")
    services = [s for s in objs if s.get("kind") == "Service" and ps in selected_pods(s["spec"].get("selector") or {}, objs)
                and (s["metadata"].get("annotations") or {}).get("prometheus.io/scrape") == "true"]
    if len(services) != 1:
        problems.add(dw, f"expected one Service with prometheus.io/scrape: \"true\" for the sink, found {len(services)}")
    for s in services:
        ann = s["metadata"]["annotations"]
        sp = next((p for p in s["spec"]["ports"] if p.get("targetPort") in ("admin", port)), None)
        if not sp or ann.get("prometheus.io/port") != str(sp["port"]) or sp["port"] != port:
            problems.add(f"{where} Service {s['metadata']['name']}", f"needs a port {port} -> admin and prometheus.io/port \"{port}\"")
        if ann.get("prometheus.io/path") != "/metrics":
            problems.add(f"{where} Service {s['metadata']['name']}", "prometheus.io/path must be /metrics")
    pdbs = [p for p in objs if p.get("kind") == "PodDisruptionBudget" and ps in selected_pods(p["spec"]["selector"]["matchLabels"], objs)]
    if len(pdbs) != 1:
        problems.add(dw, f"expected one PodDisruptionBudget for the sink, found {len(pdbs)}")

    # Security: non-root as the image's USER, read-only root, the spool on an emptyDir.
    psc, csc = ps.get("securityContext") or {}, c.get("securityContext") or {}
    uid = str(csc.get("runAsUser", psc.get("runAsUser", "")))
    if not (csc.get("runAsNonRoot") or psc.get("runAsNonRoot")) or uid != (image["user"] or "").split(":")[0]:
        problems.add(dw, f"runAsNonRoot with the image's USER {image['user']} (runAsUser {uid or 'unset'})")
    if csc.get("readOnlyRootFilesystem") is not True or csc.get("allowPrivilegeEscalation") is not False:
        problems.add(dw, "readOnlyRootFilesystem: true and allowPrivilegeEscalation: false")
    tmp = env.get("TMPDIR", "/tmp")
    spool = next((m for m in c.get("volumeMounts") or [] if m["mountPath"] == tmp), None)
    if not spool or "emptyDir" not in next(v for v in ps["volumes"] if v["name"] == spool["name"]):
        problems.add(dw, f"TMPDIR {tmp} (the spool directory) must be an emptyDir mount")
    # The daemon's own bounds within the pod's, by the sizing formulas of docs/operations.md
    # "Sizing": the spool emptyDir holds memory.max_spool and the spare spool files (the
    # kubelet evicts a pod that passes its sizeLimit); the memory limit holds the budget, two
    # part buffers and the fixed 64 MiB.
    mem = eff.get("memory") or {}
    tmpfs = 0  # a spool emptyDir with medium Memory is a tmpfs, charged to the container's memory
    if spool:
        spool_vol = next(v for v in ps["volumes"] if v["name"] == spool["name"])
        size_limit = (spool_vol.get("emptyDir") or {}).get("sizeLimit")
        if (spool_vol.get("emptyDir") or {}).get("medium") == "Memory":
            if not size_limit:
                problems.add(dw, "the spool emptyDir is medium Memory without a sizeLimit: the tmpfs may take "
                                 "the whole memory limit")
            tmpfs = quantity(size_limit) if size_limit else 0
        if size_limit and spool_floor(mem) > quantity(size_limit):
            problems.add(dw, f"memory.max_spool ({mem.get('max_spool', '4GiB (the default)')}) + the spare spool "
                             f"files (min(max_spool / 4, 256 MiB)) = {spool_floor(mem) / 2**20:.0f} MiB passes the "
                             f"spool emptyDir's sizeLimit {size_limit}: lower memory.max_spool")
    mem_limit = ((c.get("resources") or {}).get("limits") or {}).get("memory")
    floor = memory_floor(mem, eff.get("s3") or {}) + tmpfs
    if not mem_limit:
        problems.add(dw, "no memory limit: set it by the sizing formula (docs/operations.md \"Sizing\")")
    elif floor > quantity(mem_limit):
        problems.add(dw, f"memory.max_buffered ({mem.get('max_buffered', '256MiB (the default)')}) + 2 x "
                         f"s3.part_size + 64 MiB{' + the tmpfs spool sizeLimit' if tmpfs else ''} = "
                         f"{floor / 2**20:.0f} MiB passes the container's memory limit {mem_limit}")
    sa = find(objs, "ServiceAccount", ps.get("serviceAccountName", ""))
    if require_irsa and (not sa or "eks.amazonaws.com/role-arn" not in (sa["metadata"].get("annotations") or {})):
        problems.add(dw, "the ServiceAccount shows the IRSA annotation eks.amazonaws.com/role-arn")

    # Once the daemon serves them, the paths must be the daemon's own.
    admin_src = os.path.join(source, "lib", "admin")
    if os.path.isdir(admin_src):
        text = "".join(open(os.path.join(admin_src, n), encoding="utf-8", errors="replace").read()
                       for n in os.listdir(admin_src) if n.endswith((".cpp", ".hpp")))
        for path in ("/healthz", "/readyz", "/metrics"):
            if f'"{path}"' not in text:
                problems.add(dw, f"lib/admin does not serve {path}")

    # An overlay with its own S3 server: the sink's keys, endpoint and bucket match it.
    minio = find(objs, "Deployment", "minio")
    if minio:
        root = find(objs, "Secret", "minio-root") or {}
        rd = root.get("stringData") or {}
        if env.get("AWS_ACCESS_KEY_ID") != rd.get("MINIO_ROOT_USER") or env.get("AWS_SECRET_ACCESS_KEY") != rd.get("MINIO_ROOT_PASSWORD"):
            problems.add(dw, "the sink's AWS keys are not MinIO's credentials")
        svc = find(objs, "Service", "minio")
        endpoint = str((cfg.get("s3") or {}).get("endpoint", ""))
        if not svc or endpoint != f"http://minio:{svc['spec']['ports'][0]['port']}":
            problems.add(dw, f"s3.endpoint {endpoint!r} is not the minio Service")
        job = find(objs, "Job", "minio-make-bucket")
        bucket = env.get("S3_BUCKET", "")
        if not job or f"local/{bucket}" not in " ".join(job["spec"]["template"]["spec"]["containers"][0].get("args", [])):
            problems.add(dw, f"no Job creates the bucket {bucket!r}")


def scalars(node):
    """Every string value of a parsed YAML document (comments are gone by then)."""
    if isinstance(node, dict):
        return [s for v in node.values() for s in scalars(v)]
    if isinstance(node, list):
        return [s for v in node for s in scalars(v)]
    return [node] if isinstance(node, str) else []


def kubectl_objects(kdir):
    out = subprocess.run(["kubectl", "kustomize", kdir], capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr
    return [d for d in yaml.safe_load_all(out.stdout) if d], ""


def unhash(node, names):
    """The object with generated ConfigMap names (name-<hash>) put back to the plain names."""
    if isinstance(node, dict):
        return {k: unhash(v, names) for k, v in node.items()}
    if isinstance(node, list):
        return [unhash(v, names) for v in node]
    return names.get(node, node) if isinstance(node, str) else node


def without_helpers(node):
    if isinstance(node, dict):
        return {k: without_helpers(v) for k, v in node.items() if k != "_image_name"}
    if isinstance(node, list):
        return [without_helpers(v) for v in node]
    return node


def strip_hash(name):
    return re.sub(r"-[a-z0-9]{10}$", "", name)


def check_rendered(a):
    """The checks of one kustomization, on objects another tool rendered."""
    problems = Problems()
    where = os.path.basename(a.rendered)
    objs = load_docs(a.rendered)
    extra = load_docs(a.extra) if a.extra else []
    for o in objs:
        for c in pod_containers(o):
            if c.get("image", "").rpartition(":")[0].rsplit("/", 1)[-1] == "iggy-s3-sink":
                c["_image_name"] = "iggy-s3-sink"
    seen = set()
    for o in objs + extra:
        key = (o.get("kind"), (o.get("metadata") or {}).get("name"))
        if key in seen:
            problems.add(where, f"{key[0]} {key[1]} twice")
        seen.add(key)
        check_object(o, f"{where} {key[0]} {key[1]}", objs + extra, problems)
    check_sink(objs + extra, where, a.source, a.binary, problems, require_irsa=False)
    print(f"{where}: {len(objs)} objects: " + ", ".join(f"{k}/{n}" for k, n in sorted(seen)))
    for p in problems.items:
        print(f"PROBLEM {p}")
    print(f"{len(problems.items)} problems")
    return 1 if problems.items else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--rendered", help="check these objects (helm template's output) instead of docker/k8s")
    ap.add_argument("--extra", help="objects the cluster holds already (an existingSecret)")
    a = ap.parse_args()
    if a.rendered:
        return check_rendered(a)
    k8s = os.path.join(a.source, "docker", "k8s")
    dirs = [os.path.join(k8s, "base")]
    overlays = os.path.join(k8s, "overlays")
    if os.path.isdir(overlays):
        dirs += sorted(os.path.join(overlays, d) for d in os.listdir(overlays))
    problems = Problems()
    for d in dirs:
        where = os.path.relpath(d, a.source)
        objs = render(d, problems)
        seen = set()
        for o in objs:
            key = (o.get("kind"), (o.get("metadata") or {}).get("name"))
            if key in seen:
                problems.add(where, f"{key[0]} {key[1]} twice")
            seen.add(key)
            check_object(o, f"{where} {key[0]} {key[1]}", objs, problems)
        check_sink(objs, where, a.source, a.binary, problems)
        print(f"{where}: {len(objs)} objects: " + ", ".join(f"{k}/{n}" for k, n in sorted(seen)))
        if not shutil.which("kubectl"):
            print(f"{where}: no kubectl on PATH: the kubectl kustomize comparison is left out")
        else:
            theirs, err = kubectl_objects(d)
            if theirs is None:
                problems.add(where, f"kubectl kustomize failed: {err}")
            else:
                hashed = {o["metadata"]["name"]: strip_hash(o["metadata"]["name"]) for o in theirs
                          if o["kind"] == "ConfigMap"}
                theirs = {(o["kind"], strip_hash(o["metadata"]["name"])): unhash(o, hashed) for o in theirs}
                mine = {(o.get("kind"), o["metadata"]["name"]): without_helpers(o) for o in objs}
                if set(theirs) != set(mine):
                    problems.add(where, f"kubectl kustomize renders {sorted(theirs)}, this check {sorted(mine)}")
                else:
                    for key in sorted(k for k in mine if mine[k] != theirs[k]):
                        problems.add(where, f"{key[0]} {key[1]}: kubectl kustomize renders it differently")
                    print(f"{where}: kubectl kustomize renders the same {len(theirs)} objects")
    for p in problems.items:
        print(f"PROBLEM {p}")
    print(f"{len(problems.items)} problems")
    return 1 if problems.items else 0


if __name__ == "__main__":
    sys.exit(main())
