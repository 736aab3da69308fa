#!/usr/bin/env python3
"""Writes grafana/dashboards/*.json: one dashboard per question (see docs/dashboards.md).

The JSON files are committed; edit this file and run `python3 grafana/generate.py` to change them
(a unit test checks their structure and that they match this script, the end-to-end test runs every
query against a real Prometheus). Every query uses the family names of docs/design.md#metrics.
gpuattr's gauges are read as they are; only counters (`*_total`) go through rate() or increase().

Rules the tests hold every dashboard to (tests/unit/dashboards_test.cc):
- the data source is the `datasource` variable, so file provisioning needs no edit;
- a `cluster`, `namespace` or `node` variable exists on a dashboard only if every data panel uses it;
- every stat, gauge and bar gauge (and every gauge cell) has its own thresholds;
- every aggregation keeps `cluster`; aggregations over per-resource families keep `resource` (no
  replicas, whole GPUs and MIG slices are ever added together);
- no division by a series that may be 0; top-k in a graph is chosen over the whole time range.
"""
import json
import pathlib
import sys

OUT = pathlib.Path(__file__).resolve().parent / "dashboards"
DS = {"type": "prometheus", "uid": "${datasource}"}
# Every gpuattr selector filters on the job and instance too: two gpuattr processes feeding one
# Prometheus (a workstation and an in-cluster one, or the shards of a sharded install) would
# otherwise add up in every sum (docs/dashboards.md#jobs-and-instances).
# SELECTOR is the jsonnet mixin's default _config.selector (mixin/config.libsonnet): it is in every
# gpuattr query, so that the mixin retargets every query by replacing it (mixin/dashboards/).
SELECTOR = 'job="gpuattr"'
JI = SELECTOR + ', job=~"$job", instance=~"$instance"'
C = 'cluster=~"$cluster", ' + JI
CN = C + ', namespace=~"$namespace"'
CNN = CN + ', node=~"$node"'
CNODE = C + ', node=~"$node"'
POD_KEYS = "cluster, namespace, pod, node"
GIB = 1073741824
J_PER_KWH = 3600000

# Threshold sets. Grafana's default (green, red at 80) paints "805 W" red and "5 critical" green:
# every stat, gauge and bar gauge gets one of these instead.
def thresholds(base, *steps):
    return {"mode": "absolute",
            "steps": [{"color": base, "value": None}] + [{"color": c, "value": v} for v, c in steps]}


NEUTRAL = thresholds("blue")                           # a quantity, neither good nor bad
BAD_IF_ANY = thresholds("green", (1, "red"))           # critical cards, exporters down
WARN_IF_ANY = thresholds("green", (1, "orange"))       # pending pods, idle pods, warnings
IDLE_GPU_EQ = thresholds("green", (0.001, "orange"))   # any GPU-equivalent held idle
IDLE_BYTES = thresholds("green", (GIB, "orange"), (8 * GIB, "red"))  # the alerts' thresholds
FULL = thresholds("blue", (1, "orange"))               # fully requested: new pods wait
KV_CACHE = thresholds("green", (0.9, "orange"))        # gpuattr's saturation threshold
UP = thresholds("red", (1, "green"))                   # 0 down, 1 up
DATA_AGE = thresholds("green", (60, "orange"), (300, "red"))  # 300 s: stale_after's default
CYCLE = thresholds("green", (10, "orange"), (20, "red"))       # 20 s: the default --interval


def link(title, uid, params):
    """A data link to another bundled dashboard carrying the time range and the data source.
    params: [(variable, value template)]."""
    query = "&".join(f"var-{k}={v}" for k, v in params)
    # The job and instance selection goes along as it is (every dashboard has both variables).
    keep = "&${job:queryparam}&${instance:queryparam}"
    return {"title": title,
            "url": f"/d/{uid}/{uid}?{query}{keep}&${{datasource:queryparam}}&${{__url_time_range}}"}


POD_LINK = ("pod", [link("Pods of ${__data.fields.namespace}", "gpuattr-pods", [
    ("cluster", "${__data.fields.cluster}"), ("namespace", "${__data.fields.namespace}")])])
NODE_LINK = ("node", [link("Devices of ${__data.fields.node}", "gpuattr-devices", [
    ("cluster", "${__data.fields.cluster}"), ("node", "${__data.fields.node}")])])


class Layout:
    """Places panels left to right on Grafana's 24-column grid, wrapping to a new row."""

    def __init__(self):
        self.x = self.y = self.row_h = 0

    def place(self, w, h):
        if self.x + w > 24:
            self.x, self.y, self.row_h = 0, self.y + self.row_h, 0
        pos = {"x": self.x, "y": self.y, "w": w, "h": h}
        self.x += w
        self.row_h = max(self.row_h, h)
        return pos

    def row(self, title, panel_id):
        self.x, self.y, self.row_h = 0, self.y + self.row_h, 0
        pos = {"x": 0, "y": self.y, "w": 24, "h": 1}
        self.y += 1
        return {"type": "row", "id": panel_id, "title": title, "collapsed": False, "gridPos": pos, "panels": []}


def target(ref, expr, legend="", instant=False, table=False):
    t = {"datasource": DS, "refId": ref, "expr": expr, "legendFormat": legend}
    if instant:
        t["instant"] = True
        t["range"] = False
    if table:
        t["format"] = "table"
    return t


def top_over_range(k, series, keys, rank=None):
    """The k series of `series` that rank highest over the dashboard's whole time range (not per
    step, which would show a different top k at every point). rank: the ranking expression, by
    default the series' mean over the range."""
    rank = rank or f"avg_over_time({series}[$__range] @ end())"
    return f"{series} and on ({keys}) topk({k}, {rank})"


class Dashboard:
    def __init__(self, uid, title, description, variables=("cluster", "namespace", "node"),
                 namespace_query="gpuattr_namespace_gpu_pods", node_query="gpuattr_device_info"):
        self.uid, self.title, self.description = uid, title, description
        self.vars = variables
        self.namespace_query, self.node_query = namespace_query, node_query
        self.panels, self.layout, self.next_id = [], Layout(), 1

    def _id(self):
        i = self.next_id
        self.next_id += 1
        return i

    def row(self, title):
        self.panels.append(self.layout.row(title, self._id()))

    def _panel(self, kind, title, desc, w, h, targets, unit, extra=None):
        p = {
            "type": kind,
            "id": self._id(),
            "title": title,
            "description": desc,
            "datasource": DS,
            "gridPos": self.layout.place(w, h),
            "targets": targets,
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "options": {},
        }
        if extra:
            p.update(extra)
        self.panels.append(p)
        return p

    def stat(self, title, desc, expr, unit, steps, w=6, h=4, decimals=None, legend="{{cluster}}", mappings=None):
        p = self._panel("stat", title, desc, w, h, [target("A", expr, legend, instant=True)], unit)
        p["options"] = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                        "colorMode": "value", "graphMode": "none", "textMode": "auto", "justifyMode": "auto",
                        "orientation": "auto"}
        d = p["fieldConfig"]["defaults"]
        d["thresholds"] = steps
        d["color"] = {"mode": "thresholds"}
        if decimals is not None:
            d["decimals"] = decimals
        if mappings:
            d["mappings"] = mappings
        return p

    def timeseries(self, title, desc, series, unit, w=12, h=8, stack=False, min0=True):
        """series: [(expr, legend)]"""
        targets = [target(chr(ord("A") + i), e, l) for i, (e, l) in enumerate(series)]
        p = self._panel("timeseries", title, desc, w, h, targets, unit)
        d = p["fieldConfig"]["defaults"]
        d["custom"] = {"drawStyle": "line", "lineWidth": 1, "fillOpacity": 20 if stack else 0,
                       "stacking": {"mode": "normal" if stack else "none", "group": "A"}}
        d["color"] = {"mode": "palette-classic"}
        if min0:
            d["min"] = 0
        p["options"] = {"legend": {"displayMode": "table", "placement": "right", "calcs": ["lastNotNull"]},
                        "tooltip": {"mode": "multi", "sort": "desc"}}
        return p

    def bars(self, title, desc, expr, legend, unit, steps, w=12, h=8, max_=None):
        p = self._panel("bargauge", title, desc, w, h, [target("A", expr, legend, instant=True)], unit)
        p["options"] = {"orientation": "horizontal", "displayMode": "gradient", "showUnfilled": True,
                        "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False}}
        d = p["fieldConfig"]["defaults"]
        d["min"] = 0
        if max_ is not None:
            d["max"] = max_
        d["thresholds"] = steps
        d["color"] = {"mode": "thresholds"}
        return p

    def table(self, title, desc, columns, w=24, h=10, hide=(), sort=None, links=()):
        """columns: [(title, expr, unit[, thresholds for a gauge cell])]; instant queries joined on their
        labels (merge). links: [(field, [link])] data links on label columns."""
        targets, overrides, rename = [], [], {}
        for i, col in enumerate(columns):
            name, expr, unit = col[:3]
            ref = chr(ord("A") + i)
            targets.append(target(ref, expr, instant=True, table=True))
            value = "Value #" + ref if len(columns) > 1 else "Value"
            rename[value] = name
            props = [{"id": "unit", "value": unit}]
            if unit == "percentunit":
                props += [{"id": "custom.cellOptions", "value": {"type": "gauge", "mode": "basic"}},
                          {"id": "min", "value": 0}, {"id": "max", "value": 1},
                          {"id": "thresholds", "value": col[3] if len(col) > 3 else NEUTRAL},
                          {"id": "color", "value": {"mode": "thresholds"}}]
            overrides.append({"matcher": {"id": "byName", "options": name}, "properties": props})
        for field, field_links in links:
            overrides.append({"matcher": {"id": "byName", "options": field},
                              "properties": [{"id": "links", "value": field_links}]})
        excluded = {"Time": True, "__name__": True, "job": True, "instance": True}
        for h_ in hide:
            excluded[h_] = True
        p = self._panel("table", title, desc, w, h, targets, "short")
        p["fieldConfig"]["overrides"] = overrides
        p["transformations"] = [{"id": "merge", "options": {}},
                                {"id": "organize", "options": {"excludeByName": excluded, "renameByName": rename}}]
        p["options"] = {"showHeader": True, "cellHeight": "sm", "footer": {"show": False}}
        if sort:
            p["options"]["sortBy"] = [{"displayName": sort, "desc": True}]
        return p

    def text(self, title, markdown, w=24, h=6):
        p = {"type": "text", "id": self._id(), "title": title, "gridPos": self.layout.place(w, h),
             "options": {"mode": "markdown", "content": markdown}}
        self.panels.append(p)
        return p

    def variables(self):
        def var(name, label, query):
            return {
                "name": name, "label": label, "type": "query", "datasource": DS,
                "definition": query, "query": {"query": query, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
                "refresh": 2, "sort": 1, "multi": True, "includeAll": True, "allValue": ".*",
                "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
                "options": [], "hide": 0, "regex": "",
            }
        # The data source is a variable: the dashboards import and provision as they are, and pick
        # the default Prometheus (or the one chosen in the menu). No `current`: Grafana's schema
        # wants text and value in one, and without it Grafana starts on the default data source.
        out = [{"name": "datasource", "label": "data source", "type": "datasource", "query": "prometheus",
                "hide": 0, "includeAll": False, "multi": False, "options": [], "refresh": 1,
                "regex": "", "skipUrlSync": False}]
        out.append(var("job", "job", f"label_values(gpuattr_build_info{{{SELECTOR}}}, job)"))
        out.append(var("instance", "instance", f'label_values(gpuattr_build_info{{{SELECTOR}, job=~"$job"}}, instance)'))
        out.append(var("cluster", "cluster", f"label_values(gpuattr_cluster_up{{{JI}}}, cluster)"))
        scope = C
        if "namespace" in self.vars:
            out.append(var("namespace", "namespace", f"label_values({self.namespace_query}{{{scope}}}, namespace)"))
            if self.node_query.startswith("gpuattr_pod_"):
                scope = CN
        if "node" in self.vars:
            out.append(var("node", "node", f"label_values({self.node_query}{{{scope}}}, node)"))
        return out

    def annotations(self):
        # Firing gpuattr alerts on every graph. Alerts without a cluster label (GpuattrDown) show
        # whatever clusters are selected.
        return [
            {"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"}, "enable": True, "hide": True,
             "iconColor": "rgba(0, 211, 255, 1)", "name": "Annotations & Alerts", "type": "dashboard"},
            {"name": "gpuattr alerts", "datasource": DS, "enable": True, "hide": False, "iconColor": "red",
             "expr": 'ALERTS{alertname=~"Gpuattr.*", alertstate="firing", cluster=~"${cluster}|"}',
             "step": "60s", "titleFormat": "{{alertname}}",
             "textFormat": "{{severity}} {{cluster}} {{namespace}} {{pod}} {{node}} {{gpu}}",
             "tagKeys": "severity,cluster", "useValueForTime": False},
        ]

    def json(self):
        return {
            "__requires": [
                {"type": "grafana", "id": "grafana", "name": "Grafana", "version": "10.4.0"},
                {"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"},
                {"type": "panel", "id": "timeseries", "name": "Time series", "version": ""},
                {"type": "panel", "id": "stat", "name": "Stat", "version": ""},
                {"type": "panel", "id": "table", "name": "Table", "version": ""},
                {"type": "panel", "id": "bargauge", "name": "Bar gauge", "version": ""},
                {"type": "panel", "id": "text", "name": "Text", "version": ""},
            ],
            "annotations": {"list": self.annotations()},
            "description": self.description,
            "editable": True,
            "graphTooltip": 1,
            "id": None,
            # icon, tooltip and targetBlank are required by Grafana's schema (tests/grafana-schema).
            "links": [{"type": "dashboards", "tags": ["gpuattr"], "asDropdown": True, "title": "gpuattr",
                       "includeVars": True, "keepTime": True, "icon": "external link", "tooltip": "",
                       "targetBlank": False}],
            "panels": self.panels,
            "refresh": "30s",
            "schemaVersion": 39,
            "tags": ["gpuattr", "gpu", "kubernetes"],
            "templating": {"list": self.variables()},
            "time": {"from": "now-6h", "to": "now"},
            "timepicker": {},
            "timezone": "",
            "title": self.title,
            "uid": self.uid,
            "version": 1,
        }


def zero_fill(count_expr, present):
    """count_expr per cluster, 0 for the clusters where `present` has series (so "0 critical" means
    "health data, nothing critical", and no health data stays empty, not a fake 0)."""
    return f"{count_expr} or on (cluster) (0 * group by (cluster) ({present}))"


def namespaces():
    d = Dashboard("gpuattr-namespaces", "gpuattr / Namespaces",
                  "Whose GPUs are these: per namespace, what it requested per resource, GPU-equivalents in use, "
                  "utilisation, memory held and held idle, power, energy per day, pending pods.",
                  variables=("cluster", "namespace"))
    d.stat("GPU-equivalents in use", "Whole GPU = 1, MIG slice = its share of the card; per cluster.",
           f"sum by (cluster) (gpuattr_namespace_gpu_equivalents{{{CN}}})", "short", NEUTRAL, decimals=2)
    d.stat("Power", "Σ of the selected namespaces' attributed power (each card counted once).",
           f"sum by (cluster) (gpuattr_namespace_power_watts{{{CN}}})", "watt", NEUTRAL)
    d.stat("Memory held idle", "GPU memory held by idle pods (utilisation < 5 %, ≥ 256 MiB).",
           f"sum by (cluster) (gpuattr_namespace_memory_idle_bytes{{{CN}}})", "bytes", IDLE_BYTES)
    d.stat("Pending GPU pods", "Pods waiting for GPU resources.",
           f"sum by (cluster) (gpuattr_namespace_pending_pods{{{CN}}})", "short", WARN_IF_ANY)
    ns_links = [("namespace", [
        link("Pods of ${__data.fields.namespace}", "gpuattr-pods",
             [("cluster", "${__data.fields.cluster}"), ("namespace", "${__data.fields.namespace}")]),
        link("Idle pods of ${__data.fields.namespace}", "gpuattr-idle",
             [("cluster", "${__data.fields.cluster}"), ("namespace", "${__data.fields.namespace}")]),
        link("Pending pods of ${__data.fields.namespace}", "gpuattr-pending",
             [("cluster", "${__data.fields.cluster}"), ("namespace", "${__data.fields.namespace}")]),
    ])]
    d.table("Whose GPUs are these", "One row per namespace: what it uses and what it wastes (requests per resource "
            "below). Devices in use counts whole GPUs and MIG slices alike; GPU-equivalents is the comparable "
            "measure. Click a namespace for its pods.", [
        ("GPU-equivalents", f"gpuattr_namespace_gpu_equivalents{{{CN}}}", "short"),
        ("devices in use", f"gpuattr_namespace_devices_in_use{{{CN}}}", "short"),
        ("GPU pods", f"gpuattr_namespace_gpu_pods{{{CN}}}", "short"),
        ("utilisation", f"gpuattr_namespace_utilization_ratio{{{CN}}}", "percentunit"),
        ("memory used", f"gpuattr_namespace_memory_used_bytes{{{CN}}}", "bytes"),
        ("memory idle", f"gpuattr_namespace_memory_idle_bytes{{{CN}}}", "bytes"),
        ("idle pods", f"gpuattr_namespace_idle_pods{{{CN}}}", "short"),
        ("power", f"gpuattr_namespace_power_watts{{{CN}}}", "watt"),
        ("energy 24 h", f"increase(gpuattr_namespace_energy_joules_total{{{CN}}}[1d]) / {J_PER_KWH}", "kwatth"),
        ("pending pods", f"gpuattr_namespace_pending_pods{{{CN}}}", "short"),
    ], sort="power", links=ns_links)
    d.row("Requested and in use")
    d.table("Requested per resource", "Devices (whole GPUs, MIG slices of one profile, DRA devices) and time-slicing "
            "replicas its pods hold, one row per resource: never added across resources.", [
        ("devices", f"gpuattr_namespace_requested_devices{{{CN}}}", "short"),
        ("replicas", f"gpuattr_namespace_requested_replicas{{{CN}}}", "short"),
    ], w=10, h=8, links=ns_links)
    d.timeseries("Requested devices per resource", "Per namespace and resource; GPU-equivalents in use beside it.", [
        (f"gpuattr_namespace_requested_devices{{{CN}}}", "{{namespace}} {{resource}} requested"),
        (f"gpuattr_namespace_gpu_equivalents{{{CN}}}", "{{namespace}} GPU-equivalents in use"),
    ], "short", w=14)
    d.timeseries("Utilisation", "GPU-equivalent-weighted mean utilisation of the namespace's devices.",
                 [(f"gpuattr_namespace_utilization_ratio{{{CN}}}", "{{namespace}}")], "percentunit")
    d.timeseries("Pending GPU pods", "Pods of the namespace waiting for GPU resources.",
                 [(f"gpuattr_namespace_pending_pods{{{CN}}}", "{{namespace}}")], "short")
    d.row("Memory, power, energy")
    d.timeseries("GPU memory held", "Σ of the namespace's pods' GPU memory.",
                 [(f"gpuattr_namespace_memory_used_bytes{{{CN}}}", "{{namespace}}")], "bytes", w=8, stack=True)
    d.timeseries("GPU memory held idle", "Memory held by the namespace's idle pods.",
                 [(f"gpuattr_namespace_memory_idle_bytes{{{CN}}}", "{{namespace}}")], "bytes", w=8, stack=True)
    d.timeseries("Power", "Attributed power per namespace (stacked: the total is the attributed part of the cards).",
                 [(f"gpuattr_namespace_power_watts{{{CN}}}", "{{namespace}}")], "watt", w=8, stack=True)
    d.bars("Energy per day", "increase() of the namespace's energy counter over the last 24 h.",
           f"sort_desc(increase(gpuattr_namespace_energy_joules_total{{{CN}}}[1d]) / {J_PER_KWH})",
           "{{cluster}} {{namespace}}", "kwatth", NEUTRAL, w=24)
    rightsizing(d)
    return d


def rightsizing(d):
    """The Rightsizing row (docs/rightsizing.md): what following the recommendations would give back."""
    d.row("Rightsizing")
    d.bars("Reclaimable GPU-equivalents per namespace", "Σ over the namespace's workloads of what following "
           "their rightsizing recommendations would give back now: max(0, held share − recommended share) per "
           "pod's device.",
           f"sort_desc(sum by (cluster, namespace) (gpuattr_workload_reclaimable_gpu_equivalents{{{CN}}}))",
           "{{cluster}} {{namespace}}", "short", NEUTRAL)
    d.bars("Reclaimable cost per hour per namespace", "The same, each pod's part × its card's price per GPU-hour "
           "(accounting.prices); priced cards only.",
           f"sort_desc(sum by (cluster, namespace, currency) (gpuattr_workload_reclaimable_cost_per_hour{{{CN}}}))",
           "{{cluster}} {{namespace}} ({{currency}})", "short", NEUTRAL)
    d.table("Workloads to rightsize", "One row per workload (its pods' controller): current → recommended and why "
            "(insufficient_data, memory_bound, compute_bound, needs_larger, fits_smaller, right_sized, "
            "no_mig_model), from its peak memory and p95 utilisation over the observed time.", [
        ("recommendation", f"gpuattr_workload_recommendation{{{CN}}}", "short"),
        ("reclaimable GPU-equivalents", f"gpuattr_workload_reclaimable_gpu_equivalents{{{CN}}}", "short"),
        ("GPU-equivalents held", f"gpuattr_workload_gpu_equivalents{{{CN}}}", "short"),
        ("pods", f"gpuattr_workload_pods{{{CN}}}", "short"),
        ("peak memory", f"gpuattr_workload_memory_peak_bytes{{{CN}}}", "bytes"),
        ("p95 utilisation", f"gpuattr_workload_utilization_p95_ratio{{{CN}}}", "percentunit"),
        ("observed", f"gpuattr_workload_observed_seconds{{{CN}}}", "s"),
    ], h=10, hide=("Value #A",), sort="reclaimable GPU-equivalents")


def pods():
    d = Dashboard("gpuattr-pods", "gpuattr / Pods",
                  "Every pod gpuattr sees on a GPU: devices, utilisation, memory, power, idleness and how its numbers "
                  "were attributed; and their history.", node_query="gpuattr_pod_devices")
    on_node = f"group by (cluster, namespace, pod, node) (gpuattr_pod_devices{{{CNN}}})"
    d.table("GPU pods", "One row per pod (instant values). Click a pod for the devices of its node.", [
        ("devices", f"gpuattr_pod_devices{{{CNN}}}", "short"),
        ("GPU-equivalents", f"gpuattr_pod_gpu_equivalents{{{CNN}}}", "short"),
        ("utilisation", f"gpuattr_pod_utilization_ratio{{{CNN}}}", "percentunit"),
        ("memory used", f"gpuattr_pod_memory_used_bytes{{{CNN}}}", "bytes"),
        ("memory total", f"gpuattr_pod_memory_total_bytes{{{CNN}}}", "bytes"),
        ("power", f"gpuattr_pod_power_watts{{{CNN}}}", "watt"),
        ("idle", f"gpuattr_pod_idle{{{CNN}}}", "bool_yes_no"),
        ("idle for", f"gpuattr_pod_idle_seconds{{{CNN}}}", "s"),
        ("energy 24 h", f"increase(gpuattr_pod_energy_joules_total{{{CNN}}}[1d]) / {J_PER_KWH}", "kwatth"),
    ], h=12, sort="power", links=[("pod", NODE_LINK[1]), NODE_LINK])
    d.table("Pod → devices", "Which device each pod uses and how it shares it (exclusive, mig, time_sliced, "
            "unrequested). Click a node for its devices.", [
        ("pod on device", f"gpuattr_pod_device{{{CNN}}}", "short"),
    ], w=12, h=10, hide=("Value",), links=[NODE_LINK])
    d.table("Attribution method", "How each pod's numbers were split: process (per-process memory), dcgm_pod "
            "(dcgm-exporter's pod labels) or even_split (k pods on one device, split evenly).", [
        ("attributed", f"gpuattr_pod_attribution{{{CN}}} * on (cluster, namespace, pod) group_left (node) {on_node}",
         "short"),
    ], w=12, h=10, hide=("Value",))
    d.table("Requested resources", "GPU resources the pods on the selected nodes hold, per resource: devices and "
            "time-slicing replicas apart. Pods gpuattr sees on no device are counted on gpuattr / Namespaces.", [
        ("devices", f"gpuattr_pod_requested_devices{{{CN}}} * on (cluster, namespace, pod) group_left (node) {on_node}",
         "short"),
        ("replicas", f"gpuattr_pod_requested_replicas{{{CN}}} * on (cluster, namespace, pod) group_left (node) {on_node}",
         "short"),
    ], w=12, h=8)
    d.table("Pods using a GPU they did not request", "These pods hold no GPU resource but show up on a device.", [
        ("unrequested GPU use", f"gpuattr_pod_unrequested_gpu_use{{{CNN}}} == 1", "short"),
    ], w=12, h=8, hide=("Value",), links=[NODE_LINK])
    d.row("History (top 20 over the time range)")
    d.timeseries("Pod power", "The pod's share of its devices' power; the 20 pods with the highest mean over the range.",
                 [(top_over_range(20, f"gpuattr_pod_power_watts{{{CNN}}}", POD_KEYS), "{{namespace}}/{{pod}}")], "watt")
    d.timeseries("Pod utilisation", "Mean over the pod's devices (process tier: max of its processes); the 20 pods "
                 "with the highest mean over the range.",
                 [(top_over_range(20, f"gpuattr_pod_utilization_ratio{{{CNN}}}", POD_KEYS), "{{namespace}}/{{pod}}")],
                 "percentunit")
    d.timeseries("Pod GPU memory", "GPU memory the pod holds; the 20 pods with the highest mean over the range.",
                 [(top_over_range(20, f"gpuattr_pod_memory_used_bytes{{{CNN}}}", POD_KEYS), "{{namespace}}/{{pod}}")],
                 "bytes")
    energy = f"gpuattr_pod_energy_joules_total{{{CNN}}}"
    d.timeseries("Pod energy rate", "rate() of the pod's energy counter (its average power over the window); the 20 "
                 "pods that used the most energy over the range.",
                 [(top_over_range(20, f"rate({energy}[$__rate_interval])", POD_KEYS,
                                  rank=f"increase({energy}[$__range] @ end())"), "{{namespace}}/{{pod}}")], "watt")
    return d


def devices():
    d = Dashboard("gpuattr-devices", "gpuattr / Devices and health",
                  "Cards and MIG slices: what each is, how busy, how hot, who is on it; health state and issues.",
                  variables=("cluster", "node"))
    health = f"gpuattr_device_health{{{CNODE}}}"
    d.stat("Devices", "Whole GPUs and MIG slices seen.", f"count by (cluster) (gpuattr_device_info{{{CNODE}}})",
           "short", NEUTRAL)
    # Health is one series set per card (no gpu_instance), plus a slice's own where its state
    # differs from the card's: count cards, distinct (cluster, node, gpu).
    d.stat("Critical cards", "Physical cards whose health is critical (a card's MIG slices count once).",
           zero_fill(f'count by (cluster) (group by (cluster, node, gpu) ({health[:-1]}, state="critical"}} == 1))',
                     health), "short", BAD_IF_ANY)
    d.stat("Cards with a warning", "Physical cards whose health is warning (a card's MIG slices count once).",
           zero_fill(f'count by (cluster) (group by (cluster, node, gpu) ({health[:-1]}, state="warning"}} == 1))',
                     health), "short", WARN_IF_ANY)
    d.stat("Card power", "Σ of physical cards (each counted once).",
           f"sum by (cluster) (gpuattr_card_power_watts{{{CNODE}}})", "watt", NEUTRAL)
    # Each device's state: a slice's own series where it has one, else its card's, carried onto every
    # device of the card (gpuattr_device_info's rows) by the card labels.
    device_health = (
        f'max by (cluster, node, gpu, gpu_instance, state) ({health[:-1]}, gpu_instance!=""}} == 1)'
        f' or on (cluster, node, gpu, gpu_instance) ('
        f'max by (cluster, node, gpu, state) ({health[:-1]}, gpu_instance=""}} == 1)'
        f' * on (cluster, node, gpu) group_right (state)'
        f' group by (cluster, node, gpu, gpu_instance) (gpuattr_device_info{{{CNODE}}}))')
    d.table("Devices", "One row per whole GPU or MIG slice.", [
        ("info", f"gpuattr_device_info{{{CNODE}}}", "short"),
        ("utilisation", f"gpuattr_device_utilization_ratio{{{CNODE}}}", "percentunit"),
        ("memory used", f"gpuattr_device_memory_used_bytes{{{CNODE}}}", "bytes"),
        ("memory total", f"gpuattr_device_memory_total_bytes{{{CNODE}}}", "bytes"),
        ("power", f"gpuattr_device_power_watts{{{CNODE}}}", "watt"),
        ("temperature", f"gpuattr_device_temperature_celsius{{{CNODE}}}", "celsius"),
        ("pods", f"gpuattr_device_pods{{{CNODE}}}", "short"),
        ("health", device_health, "short"),
    ], h=12, hide=("Value #A", "Value #H"))
    d.row("Health")
    d.table("Health issues", "Every current issue with its severity and what it means (detail).", [
        ("issue", f"gpuattr_device_health_issue{{{CNODE}}} == 1", "short"),
    ], w=16, h=9, hide=("Value",))
    d.table("Node health", "Worst device state per node.", [
        ("node health", f"gpuattr_node_health{{{CNODE}}} == 1", "short"),
    ], w=8, h=9, hide=("Value",))
    d.text("What the issues mean", (
        "| issue | meaning | what to do |\n|---|---|---|\n"
        "| `xid` | the driver logged an XID error (detail: code and text) | XIDs 48, 63, 64, 74, 79, 92, 94, 95: drain and reset or replace; others: look the code up in NVIDIA's XID catalogue |\n"
        "| `ecc_dbe` | uncorrectable (double-bit) ECC errors in GPU memory | drain; reset the GPU; repeated: RMA |\n"
        "| `row_remap_failed` | a faulty memory row could not be remapped | RMA the card |\n"
        "| `rows_pending_remap` | remapped rows wait for a GPU reset to take effect | reset the GPU when it is free |\n"
        "| `throttle_*` | clocks lowered (thermal, power brake, hardware slowdown) | check cooling and power; see the temperature panel |\n"
    ), h=7)
    d.row("Utilisation and power")
    d.timeseries("Device utilisation", "GPU_UTIL, else the graphics engine's activity (never added up).",
                 [(f"gpuattr_device_utilization_ratio{{{CNODE}}}", "{{node}} gpu {{gpu}} {{gpu_instance}}")], "percentunit")
    d.timeseries("SM, tensor and DRAM activity", "Profiling fields (averaged over devices); absent where dcgm-exporter does not collect them.", [
        (f"avg by (cluster, node) (gpuattr_device_sm_active_ratio{{{CNODE}}})", "{{node}} SM"),
        (f"avg by (cluster, node) (gpuattr_device_tensor_active_ratio{{{CNODE}}})", "{{node}} tensor"),
        (f"avg by (cluster, node) (gpuattr_device_dram_active_ratio{{{CNODE}}})", "{{node}} DRAM"),
    ], "percentunit")
    d.timeseries("Card power", "Physical cards, counted once.",
                 [(f"gpuattr_card_power_watts{{{CNODE}}}", "{{node}} gpu {{gpu}}")], "watt", w=8)
    d.timeseries("Node power: attributed vs unattributed", "Unattributed: idle slices and GPUs without a pod.", [
        (f"gpuattr_node_power_watts{{{CNODE}}} - gpuattr_node_unattributed_power_watts{{{CNODE}}}", "{{node}} attributed"),
        (f"gpuattr_node_unattributed_power_watts{{{CNODE}}}", "{{node}} unattributed"),
    ], "watt", w=8)
    d.timeseries("Temperature", "GPU_TEMP per card.",
                 [(f"max by (cluster, node, gpu) (gpuattr_device_temperature_celsius{{{CNODE}}})", "{{node}} gpu {{gpu}}")],
                 "celsius", w=8)
    d.table("Possible owners of devices without pod labels", "gpuattr never guesses an owner: these pods may use the device.", [
        ("candidate", f"gpuattr_device_candidate_pod{{{CNODE}}}", "short"),
    ], h=6, hide=("Value",))
    return d


IDLE = f"on ({POD_KEYS}) gpuattr_pod_idle{{{CNN}}} == 1"


def held_idle_free_pending(d, node_filter, w=24):
    """Per resource: devices and replicas held by idle pods beside free devices and pending pods."""
    idle_pods = f"on (cluster, namespace, pod) (gpuattr_pod_idle{{{CNN if node_filter else CN}}} == 1)"
    free = f"gpuattr_node_resource_free{{{CNODE if node_filter else C}}}"
    d.table("Per resource: held idle, free, pending", (
        "held by idle pods: devices (replicas) requested by idle pods; free: allocatable − requested over "
        + ("the selected nodes" if node_filter else "all nodes of the cluster") +
        "; pending pods: pods of the selected namespaces waiting for the resource. Replicas and devices are "
        "never added."), [
        ("devices held by idle pods", f"sum by (cluster, resource) (gpuattr_pod_requested_devices{{{CN}}} and {idle_pods})",
         "short"),
        ("replicas held by idle pods",
         f"sum by (cluster, resource) (gpuattr_pod_requested_replicas{{{CN}}} and {idle_pods})", "short"),
        ("free", f"sum by (cluster, resource) ({free})", "short"),
        ("pending pods", f"count by (cluster, resource) (group by (cluster, namespace, pod, resource) "
                         f"(gpuattr_pending_pod_hint{{{CN}}}))", "short"),
    ], w=w, h=8)


def idle():
    d = Dashboard("gpuattr-idle", "gpuattr / Idle and waste",
                  "Idle pods by GPU memory held and idle duration; reclaimable capacity beside pending demand.",
                  node_query="gpuattr_pod_idle")
    d.stat("Idle GPU pods", "Pods under the idle threshold holding memory.",
           zero_fill(f"count by (cluster) (gpuattr_pod_idle{{{CNN}}} == 1)", f"gpuattr_pod_idle{{{CNN}}}"),
           "short", WARN_IF_ANY)
    d.stat("Memory held idle", "GPU memory held by idle pods.",
           zero_fill(f"sum by (cluster) (gpuattr_pod_memory_used_bytes{{{CNN}}} and {IDLE})", f"gpuattr_pod_idle{{{CNN}}}"),
           "bytes", IDLE_BYTES)
    d.stat("GPU-equivalents held idle", "Hardware idle pods keep from others.",
           zero_fill(f"sum by (cluster) (gpuattr_pod_gpu_equivalents{{{CNN}}} and {IDLE})", f"gpuattr_pod_idle{{{CNN}}}"),
           "short", IDLE_GPU_EQ, decimals=2)
    d.stat("Power of idle pods", "Attributed power of the idle pods.",
           zero_fill(f"sum by (cluster) (gpuattr_pod_power_watts{{{CNN}}} and {IDLE})", f"gpuattr_pod_idle{{{CNN}}}"),
           "watt", NEUTRAL)
    d.table("Idle pods", "Sorted by memory held. Idle for: gpuattr's count of the current idle run. Click a pod "
            "for its node's devices.", [
        ("memory held", f"gpuattr_pod_memory_used_bytes{{{CNN}}} and {IDLE}", "bytes"),
        ("idle for", f"gpuattr_pod_idle_seconds{{{CNN}}} and {IDLE}", "s"),
        ("GPU-equivalents", f"gpuattr_pod_gpu_equivalents{{{CNN}}} and {IDLE}", "short"),
        ("utilisation", f"gpuattr_pod_utilization_ratio{{{CNN}}} and {IDLE}", "percentunit"),
        ("power", f"gpuattr_pod_power_watts{{{CNN}}} and {IDLE}", "watt"),
    ], h=10, sort="memory held", links=[("pod", NODE_LINK[1]), NODE_LINK])
    d.row("Reclaimable capacity beside pending demand")
    held_idle_free_pending(d, node_filter=True, w=12)
    d.timeseries("Idle vs pending", "Idle GPU-equivalents (could be freed) against pods waiting for GPUs.", [
        (f"sum by (cluster) (gpuattr_pod_gpu_equivalents{{{CNN}}} and {IDLE})", "{{cluster}} idle GPU-equivalents"),
        (f"sum by (cluster) (gpuattr_namespace_pending_pods{{{CN}}})", "{{cluster}} pending pods"),
    ], "short")
    d.row("History")
    d.timeseries("Memory held idle per namespace", "", [
        (f"sum by (cluster, namespace) (gpuattr_pod_memory_used_bytes{{{CNN}}} and {IDLE})", "{{namespace}}")],
        "bytes", stack=True)
    d.timeseries("Longest idle runs", "gpuattr_pod_idle_seconds of the 10 pods with the longest idle run over the range.", [
        (top_over_range(10, f"gpuattr_pod_idle_seconds{{{CNN}}}", POD_KEYS,
                        rank=f"max_over_time(gpuattr_pod_idle_seconds{{{CNN}}}[$__range] @ end())"),
         "{{namespace}}/{{pod}}")], "s")
    d.timeseries("Idle pods per namespace", "", [
        (f"count by (cluster, namespace) (gpuattr_pod_idle{{{CNN}}} == 1)", "{{namespace}}")], "short")
    d.timeseries("Power of idle pods per namespace", "", [
        (f"sum by (cluster, namespace) (gpuattr_pod_power_watts{{{CNN}}} and {IDLE})", "{{namespace}}")], "watt")
    return d


def allocation():
    d = Dashboard("gpuattr-allocation", "gpuattr / Allocation",
                  "The scheduler's view per node: capacity, allocatable, requested and busy devices; allocatable, "
                  "requested and free per resource; MIG slices free per profile. Pending pods: gpuattr / Pending pods.",
                  variables=("cluster", "node"), node_query="gpuattr_node_devices_capacity")
    d.table("Nodes", "Physical devices per node (whole GPUs and MIG slices alike; on a time-sliced node its replicas "
            "÷ replicas per GPU): capacity and allocatable (kubelet), unhealthy, requested by pods (devices only: "
            "replicas held are per resource below), busy (used by a pod), seen (in an exporter). Click a node for "
            "its devices.", [
        ("capacity", f"gpuattr_node_devices_capacity{{{CNODE}}}", "short"),
        ("allocatable", f"gpuattr_node_devices_allocatable{{{CNODE}}}", "short"),
        ("unhealthy", f"gpuattr_node_devices_unhealthy{{{CNODE}}}", "short"),
        ("requested", f"gpuattr_node_devices_requested{{{CNODE}}}", "short"),
        ("busy", f"gpuattr_node_devices_busy{{{CNODE}}}", "short"),
        ("seen", f"gpuattr_node_devices_seen{{{CNODE}}}", "short"),
    ], h=8, links=[NODE_LINK])
    d.timeseries("Allocatable vs requested per resource", "Σ over the selected nodes, one line per resource (never "
                 "added across resources).", [
        (f"sum by (cluster, resource) (gpuattr_node_resource_allocatable{{{CNODE}}})", "{{resource}} allocatable"),
        (f"sum by (cluster, resource) (gpuattr_node_resource_requested{{{CNODE}}})", "{{resource}} requested"),
    ], "short")
    d.bars("Requested share per node", "requested / allocatable devices (nodes with nothing allocatable are left out).",
           f"gpuattr_node_devices_requested{{{CNODE}}} / (gpuattr_node_devices_allocatable{{{CNODE}}} > 0)",
           "{{node}}", "percentunit", FULL, max_=1)
    d.row("Resources and MIG profiles")
    d.table("Per node and resource", "allocatable, requested, free = max(0, allocatable − requested).", [
        ("allocatable", f"gpuattr_node_resource_allocatable{{{CNODE}}}", "short"),
        ("requested", f"gpuattr_node_resource_requested{{{CNODE}}}", "short"),
        ("free", f"gpuattr_node_resource_free{{{CNODE}}}", "short"),
    ], w=14, h=10, links=[NODE_LINK])
    d.bars("MIG slices free per profile", "Free MIG slices over the selected nodes, by profile.",
           f'sum by (cluster, resource) (gpuattr_node_resource_free{{{CNODE}, resource=~"nvidia.com/mig-.*"}})',
           "{{resource}}", "short", NEUTRAL, w=10, h=10)
    d.timeseries("Unhealthy devices per node", "capacity − allocatable: devices the device plugin reports unhealthy.", [
        (f"gpuattr_node_devices_unhealthy{{{CNODE}}}", "{{node}}")], "short")
    d.timeseries("Busy devices per node", "Devices with utilisation ≥ 5 % or a pod on them.", [
        (f"gpuattr_node_devices_busy{{{CNODE}}}", "{{node}} busy"),
        (f"gpuattr_node_devices_requested{{{CNODE}}}", "{{node}} requested")], "short")
    return d


def pending():
    d = Dashboard("gpuattr-pending", "gpuattr / Pending pods",
                  "GPU pods the scheduler has not placed: why (hint), for how long, and what idle pods hold of the "
                  "resource they wait for.", variables=("cluster", "namespace"),
                  namespace_query="gpuattr_namespace_pending_pods")
    d.stat("Pending GPU pods", "Pods of the selected namespaces waiting for GPU resources.",
           f"sum by (cluster) (gpuattr_namespace_pending_pods{{{CN}}})", "short", WARN_IF_ANY)
    d.stat("Never fit as asked", "Pending pods whose request no node can satisfy, however long they wait.",
           zero_fill(f'count by (cluster) (group by (cluster, namespace, pod) '
                     f'(gpuattr_pending_pod_hint{{{CN}, hint!="waiting_for_free_device"}}))',
                     f"gpuattr_namespace_pending_pods{{{CN}}}"), "short", BAD_IF_ANY)
    d.stat("Waiting while idle pods hold the resource",
           "Pods waiting for a free device of a resource that idle pods (any namespace) hold.",
           zero_fill(f'count by (cluster) (group by (cluster, namespace, pod) ('
                     f'gpuattr_pending_pod_hint{{{CN}, hint="waiting_for_free_device"}} '
                     f'and on (cluster, resource) (sum by (cluster, resource) (gpuattr_pod_requested_devices{{{C}}} '
                     f'and on (cluster, namespace, pod) (gpuattr_pod_idle{{{C}}} == 1)) > 0)))',
                     f"gpuattr_namespace_pending_pods{{{CN}}}"), "short", WARN_IF_ANY, w=12)
    d.table("Pending pods and why", "hint: waiting_for_free_device (it will fit when a device frees up), or "
            "resource_not_offered, mig_partitioned, exceeds_node_max, dra_no_device, dra_exceeds_node_max (never fits "
            "as asked).", [
        ("hint", f"gpuattr_pending_pod_hint{{{CN}}}", "short"),
        ("pending for", f"max by (cluster, namespace, pod) (gpuattr_pending_pod_seconds{{{CN}}})", "s"),
    ], h=9, hide=("Value #A",), sort="pending for")
    held_idle_free_pending(d, node_filter=False)
    d.timeseries("Pending GPU pods per namespace", "", [
        (f"gpuattr_namespace_pending_pods{{{CN}}}", "{{namespace}}")], "short")
    d.timeseries("Longest pending", "The 10 pods pending longest over the range.", [
        (top_over_range(10, f"gpuattr_pending_pod_seconds{{{CN}}}", "cluster, namespace, pod",
                        rank=f"max_over_time(gpuattr_pending_pod_seconds{{{CN}}}[$__range] @ end())"),
         "{{namespace}}/{{pod}}")], "s")
    return d


def inference():
    d = Dashboard("gpuattr-inference", "gpuattr / Inference",
                  "vLLM and SGLang servers found on the cluster: KV cache, queues, throughput, latency, "
                  "saturation and tokens per joule.", variables=("cluster", "namespace"),
                  namespace_query="gpuattr_inference_requests_running")
    d.stat("Saturated servers", "Servers that queue requests with a KV cache ≥ 90 % full.",
           zero_fill(f"count by (cluster) (gpuattr_inference_saturated{{{CN}}} == 1)",
                     f"gpuattr_inference_saturated{{{CN}}}"), "short", WARN_IF_ANY)
    d.stat("Requests waiting", "Σ of queued requests.",
           f"sum by (cluster) (gpuattr_inference_requests_waiting{{{CN}}})", "short", WARN_IF_ANY)
    d.stat("Generated tokens/s", "Σ over the servers.",
           f"sum by (cluster) (gpuattr_inference_generation_tokens_per_second{{{CN}}})", "short", NEUTRAL)
    d.stat("Fullest KV cache", "The highest KV-cache use of any server.",
           f"max by (cluster) (gpuattr_inference_kv_cache_usage_ratio{{{CN}}})", "percentunit", KV_CACHE)
    d.table("Inference servers", "One row per server pod and model.", [
        ("KV cache", f"gpuattr_inference_kv_cache_usage_ratio{{{CN}}}", "percentunit", KV_CACHE),
        ("running", f"gpuattr_inference_requests_running{{{CN}}}", "short"),
        ("waiting", f"gpuattr_inference_requests_waiting{{{CN}}}", "short"),
        ("generated tokens/s", f"gpuattr_inference_generation_tokens_per_second{{{CN}}}", "short"),
        ("prompt tokens/s", f"gpuattr_inference_prompt_tokens_per_second{{{CN}}}", "short"),
        ("time to first token", f"gpuattr_inference_time_to_first_token_seconds{{{CN}}}", "s"),
        ("saturated", f"gpuattr_inference_saturated{{{CN}}}", "bool_yes_no"),
        ("tokens per joule", f"gpuattr_inference_generation_tokens_per_joule{{{CN}}}", "short"),
    ], h=8, links=[POD_LINK])
    leg = "{{namespace}}/{{pod}} {{model}}"
    d.timeseries("KV cache usage", "", [(f"gpuattr_inference_kv_cache_usage_ratio{{{CN}}}", leg)], "percentunit", w=8)
    d.timeseries("Requests running and waiting", "", [
        (f"gpuattr_inference_requests_running{{{CN}}}", leg + " running"),
        (f"gpuattr_inference_requests_waiting{{{CN}}}", leg + " waiting")], "short", w=8)
    d.timeseries("Saturated", "1 while the server queues requests with a full KV cache.", [
        (f"gpuattr_inference_saturated{{{CN}}}", leg)], "short", w=8)
    d.timeseries("Tokens per second", "", [
        (f"gpuattr_inference_generation_tokens_per_second{{{CN}}}", leg + " generated"),
        (f"gpuattr_inference_prompt_tokens_per_second{{{CN}}}", leg + " prompt")], "short", w=8)
    d.timeseries("Time to first token", "", [
        (f"gpuattr_inference_time_to_first_token_seconds{{{CN}}}", leg)], "s", w=8)
    d.timeseries("Generated tokens per joule", "Generated tokens/s ÷ the pod's attributed power.", [
        (f"gpuattr_inference_generation_tokens_per_joule{{{CN}}}", leg)], "short", w=8)
    return d


def chargeback():
    """What it costs (docs/accounting.md): GPU-hours and cost over the selected time range on the three
    bases, per namespace and team, the idle rest, waste, and the prices they were counted at."""
    d = Dashboard("gpuattr-chargeback", "gpuattr / Chargeback",
                  "What each namespace's and team's GPUs cost over the selected time range, on three bases "
                  "(allocation: what the scheduler handed out; memory: GPU memory occupied; usage: compute used), "
                  "the idle rest and the waste (allocation − usage). Cost needs prices (accounting.prices); "
                  "GPU-hours are counted for every card.", variables=("cluster",))
    rng = "[$__range]"

    def hours(family, basis, by, scope=C):
        return f"sum by ({by}) (increase({family}{{{scope}, basis=\"{basis}\"}}{rng}))"

    d.stat("GPU-hours held", "Allocation basis: the GPU-hours the scheduler handed out to pods in the range.",
           hours("gpuattr_namespace_gpu_hours_total", "allocation", "cluster"), "short", NEUTRAL, decimals=1)
    d.stat("Cost held", "Allocation basis at the configured prices (priced cards only).",
           hours("gpuattr_namespace_cost_total", "allocation", "cluster, currency"), "short", NEUTRAL,
           decimals=2, legend="{{cluster}} {{currency}}")
    d.stat("Idle GPU-hours", "Allocation basis: the cards' hours no pod held in the range.",
           hours("gpuattr_node_idle_gpu_hours_total", "allocation", "cluster"), "short", IDLE_GPU_EQ, decimals=1)
    d.stat("Waste", "GPU-hours held but not used for compute in the range: allocation − usage over the pods.",
           hours("gpuattr_namespace_gpu_hours_total", "allocation", "cluster") + " - " +
           hours("gpuattr_namespace_gpu_hours_total", "usage", "cluster"), "short", IDLE_GPU_EQ, decimals=1)
    ns = "cluster, namespace"
    d.table("GPU-hours and cost per namespace", "Over the selected range, per basis. Waste = allocation − usage "
            "(negative when a pod on a shared GPU used more than the replica it holds). Cost covers priced cards "
            "only.", [
        ("allocation h", hours("gpuattr_namespace_gpu_hours_total", "allocation", ns), "short"),
        ("memory h", hours("gpuattr_namespace_gpu_hours_total", "memory", ns), "short"),
        ("usage h", hours("gpuattr_namespace_gpu_hours_total", "usage", ns), "short"),
        ("waste h", hours("gpuattr_namespace_gpu_hours_total", "allocation", ns) + " - " +
         hours("gpuattr_namespace_gpu_hours_total", "usage", ns), "short"),
        ("allocation cost", hours("gpuattr_namespace_cost_total", "allocation", ns), "short"),
        ("memory cost", hours("gpuattr_namespace_cost_total", "memory", ns), "short"),
        ("usage cost", hours("gpuattr_namespace_cost_total", "usage", ns), "short"),
    ], h=9, sort="allocation h", links=[("namespace", [
        link("Pods of ${__data.fields.namespace}", "gpuattr-pods",
             [("cluster", "${__data.fields.cluster}"), ("namespace", "${__data.fields.namespace}")])])])
    teams = f"max by (cluster, namespace, label_team) (gpuattr_namespace_labels{{{C}}})"

    def per_team(family, basis):
        return (f"sum by (cluster, label_team) (increase({family}{{{C}, basis=\"{basis}\"}}{rng})"
                f" * on (cluster, namespace) group_left (label_team) {teams})")

    d.table("GPU-hours and cost per team", "Namespaces grouped by their `team` label "
            "(accounting.namespace_labels; empty: no team label).", [
        ("allocation h", per_team("gpuattr_namespace_gpu_hours_total", "allocation"), "short"),
        ("memory h", per_team("gpuattr_namespace_gpu_hours_total", "memory"), "short"),
        ("usage h", per_team("gpuattr_namespace_gpu_hours_total", "usage"), "short"),
        ("allocation cost", per_team("gpuattr_namespace_cost_total", "allocation"), "short"),
        ("memory cost", per_team("gpuattr_namespace_cost_total", "memory"), "short"),
        ("usage cost", per_team("gpuattr_namespace_cost_total", "usage"), "short"),
    ], w=14, h=8, sort="allocation h")
    d.table("Prices", "The price of one GPU-hour of each priced card (the first accounting.prices rule that "
            "matches it). Unpriced cards are not listed: the status page names them.", [
        ("per GPU-hour", f"gpuattr_card_price_per_hour{{{C}}}", "short"),
    ], w=10, h=8, hide=("uuid",))
    d.row("Day by day")
    daily = C  # the recording rules keep job and instance
    d.timeseries("GPU-hours per day by basis", "The recording rules' daily totals (increase over the last 24 h "
                 "at each point): pods on each basis, and the idle rest of the cards.", [
        (f"sum by (cluster, basis) (namespace_basis:gpuattr_gpu_hours:increase1d{{{daily}}})", "{{cluster}} {{basis}}"),
        (f"sum by (cluster, basis) (cluster_basis:gpuattr_idle_gpu_hours:increase1d{{{daily}}})",
         "{{cluster}} idle ({{basis}})"),
    ], "short")
    d.timeseries("Cost per day per namespace", "Allocation basis, from the recording rules' daily totals.", [
        (f"sum by (cluster, namespace, currency) (namespace_basis_currency:gpuattr_cost:increase1d{{{daily}, "
         f"basis=\"allocation\"}})", "{{cluster}} {{namespace}} {{currency}}"),
    ], "short", stack=True)
    d.bars("Idle GPU-hours per node", "Allocation basis over the selected range: the cards' hours no pod held.",
           f"sort_desc({hours('gpuattr_node_idle_gpu_hours_total', 'allocation', 'cluster, node')})",
           "{{cluster}} {{node}}", "short", NEUTRAL, w=24)
    return d


def self_dash():
    d = Dashboard("gpuattr-self", "gpuattr / gpuattr itself",
                  "Is gpuattr healthy: clusters reached, data age, cycle duration, exporters found, scrape "
                  "latency and size, rejected lines, apiserver requests, and the process itself.",
                  variables=("cluster",))
    # process_* carry the scrape's job and instance, not cluster: keep the gpuattr processes that
    # serve the selected clusters (and never another job's process_* series).
    mine = f"on (job, instance) gpuattr_build_info{{{C}}}"
    d.stat("Cluster up", "1 when the cluster's latest cycle reached the apiserver with its caches in sync.",
           f"max by (cluster) (gpuattr_cluster_up{{{C}}})", "short", UP, w=4,
           mappings=[{"type": "value", "options": {"0": {"text": "down", "color": "red"},
                                                    "1": {"text": "up", "color": "green"}}}])
    d.stat("Data age", "time() − end of the latest successful cycle.",
           f"max by (cluster) (time() - gpuattr_last_cycle_timestamp_seconds{{{C}}})", "s", DATA_AGE, w=4)
    d.stat("Cycle duration", "Wall time of the latest cycle.",
           f"max by (cluster) (gpuattr_cycle_duration_seconds{{{C}}})", "s", CYCLE, w=4)
    d.stat("Exporters up", "Exporters whose last scrape succeeded.",
           f"sum by (cluster) (gpuattr_exporter_up{{{C}}})", "short", NEUTRAL, w=4)
    d.stat("Exporters down", "Exporters (or probed candidates) whose last scrape or probe failed.",
           zero_fill(f"count by (cluster) (gpuattr_exporter_up{{{C}}} == 0)", f"gpuattr_exporter_up{{{C}}}"),
           "short", BAD_IF_ANY, w=4)
    d.stat("Untrusted candidates", "Exporter-like pods gpuattr does not read: not a DaemonSet, not pinned, no trust "
           "rule (the status page says how to trust one).",
           zero_fill(f'sum by (cluster) (gpuattr_discovery_candidates{{{C}, outcome="untrusted"}})',
                     f"gpuattr_discovery_candidates{{{C}}}"), "short", WARN_IF_ANY, w=4)
    d.table("Clusters", "Per cluster: build, up, data age, cycle duration and the configured interval.", [
        ("build", f"gpuattr_build_info{{{C}}}", "short"),
        ("up", f"gpuattr_cluster_up{{{C}}}", "bool_yes_no"),
        ("data age", f"time() - gpuattr_last_cycle_timestamp_seconds{{{C}}}", "s"),
        ("cycle duration", f"gpuattr_cycle_duration_seconds{{{C}}}", "s"),
        ("interval", f"gpuattr_cycle_interval_seconds{{{C}}}", "s"),
    ], w=12, h=6, hide=("Value #A",))
    d.table("Discovery candidates", "Probed pods by outcome (accepted, unrecognised, untrusted, error, pinned).", [
        ("candidates", f"gpuattr_discovery_candidates{{{C}}}", "short"),
    ], w=12, h=6)
    d.table("Exporters", "Every exporter found (kind: dcgm, process, vllm, sglang, prometheus, unknown); namespace and "
            "pod are the exporter's own.", [
        ("up", f"gpuattr_exporter_up{{{C}}}", "bool_yes_no"),
        ("scrape duration", f"gpuattr_exporter_scrape_duration_seconds{{{C}}}", "s"),
        ("scrape bytes", f"gpuattr_exporter_scrape_bytes{{{C}}}", "bytes"),
        ("parse errors", f"gpuattr_exporter_parse_errors{{{C}}}", "short"),
        ("rejected lines", f"sum by (cluster, namespace, pod, node, kind) (gpuattr_exporter_rejected_lines{{{C}}})",
         "short"),
    ], h=9)
    d.table("Rejected lines by reason", "Lines an exporter may not speak for (unknown_pod, pod_on_other_node, "
            "duplicate_device, unknown_node) or with impossible values (bad_value): they count nowhere.", [
        ("rejected lines", f"gpuattr_exporter_rejected_lines{{{C}}} > 0", "short"),
    ], h=6)
    d.row("History")
    d.timeseries("Data age", "Grows when cycles stop succeeding.", [
        (f"time() - gpuattr_last_cycle_timestamp_seconds{{{C}}}", "{{cluster}}")], "s", w=8)
    d.timeseries("Cycle duration", "", [(f"gpuattr_cycle_duration_seconds{{{C}}}", "{{cluster}}")], "s", w=8)
    d.timeseries("Exporters found", "By kind: up vs all.", [
        (f"sum by (cluster, kind) (gpuattr_exporter_up{{{C}}})", "{{cluster}} {{kind}} up"),
        (f"count by (cluster, kind) (gpuattr_exporter_up{{{C}}})", "{{cluster}} {{kind}} found")], "short", w=8)
    d.timeseries("Scrape latency", "Through the apiserver's pod proxy.", [
        (f"gpuattr_exporter_scrape_duration_seconds{{{C}}}", "{{namespace}}/{{pod}}")], "s", w=8)
    d.timeseries("Scrape bytes", "", [
        (f"gpuattr_exporter_scrape_bytes{{{C}}}", "{{namespace}}/{{pod}}")], "bytes", w=8)
    d.timeseries("Parse errors and rejected lines", "Malformed lines (the good lines still count) and lines rejected "
                 "by the trust rules, per exporter.", [
        (f"gpuattr_exporter_parse_errors{{{C}}}", "{{namespace}}/{{pod}} parse errors"),
        (f"sum by (cluster, namespace, pod) (gpuattr_exporter_rejected_lines{{{C}}})", "{{namespace}}/{{pod}} rejected"),
    ], "short", w=8)
    d.timeseries("Apiserver requests", "Requests per second by verb, resource and code (steady state: no LISTs).", [
        (f"sum by (cluster, verb, resource, code) (rate(gpuattr_apiserver_requests_total{{{C}}}[$__rate_interval]))",
         "{{cluster}} {{verb}} {{resource}} {{code}}")], "reqps")
    d.timeseries("Apiserver errors", "Requests that did not answer 2xx.", [
        (f'sum by (cluster, code) (rate(gpuattr_apiserver_requests_total{{{C}, code!~"2.."}}[$__rate_interval]))',
         "{{cluster}} {{code}}")], "reqps")
    d.row("The gpuattr process")
    d.timeseries("CPU", "CPU seconds per second of the gpuattr process (1 = one core).", [
        (f"rate(process_cpu_seconds_total[$__rate_interval]) and {mine}", "{{instance}}")], "percentunit", w=8)
    d.timeseries("Resident memory", "", [
        (f"process_resident_memory_bytes and {mine}", "{{instance}}")], "bytes", w=8)
    d.timeseries("Open file descriptors", "Open and maximum file descriptors.", [
        (f"process_open_fds and {mine}", "{{instance}} open"),
        (f"process_max_fds and {mine}", "{{instance}} max")], "short", w=8)
    d.stat("Uptime", "Time since the gpuattr process started.",
           f"time() - process_start_time_seconds and {mine}", "s", NEUTRAL, legend="{{instance}}")
    return d


BUILDERS = (namespaces, pods, devices, idle, allocation, pending, inference, chargeback, self_dash)


def main():
    # --check: write nothing, exit 1 when a committed file differs from what this script makes.
    check = "--check" in sys.argv[1:]
    OUT.mkdir(exist_ok=True)
    stale = []
    written = set()
    for build in BUILDERS:
        d = build()
        path = OUT / (d.uid.removeprefix("gpuattr-") + ".json")
        written.add(path.name)
        text = json.dumps(d.json(), indent=2, ensure_ascii=False) + "\n"
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
        else:
            path.write_text(text)
    for extra in sorted(p for p in OUT.glob("*.json") if p.name not in written):
        stale.append(str(extra) + " (not made by this script)")
    if stale:
        print("out of date (run python3 grafana/generate.py): " + ", ".join(stale), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
