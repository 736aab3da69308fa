#!/usr/bin/env python3
"""Writes grafana/dashboards/*.json: one dashboard per question (see docs/dashboards.md).

The JSON files are committed; edit this file and run `python3 grafana/generate.py` to change them
(a unit test checks their structure, the end-to-end test runs every query against Prometheus).
Every query uses the family names of DESIGN.md section 6. gpuattr's gauges are read as they are;
only counters (`*_total`) go through rate() or increase().
"""
import json
import pathlib
import sys

OUT = pathlib.Path(__file__).resolve().parent / "dashboards"
DS = {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}
C = 'cluster=~"$cluster"'
CN = C + ', namespace=~"$namespace"'
CNN = CN + ', node=~"$node"'
CNODE = C + ', node=~"$node"'
POD_KEYS = "cluster, namespace, pod, node"
GIB = 1073741824


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


class Dashboard:
    def __init__(self, uid, title, description, node_query="gpuattr_device_info"):
        self.uid, self.title, self.description = uid, title, description
        self.node_query = node_query
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

    def stat(self, title, desc, expr, unit, w=6, h=4, decimals=None):
        p = self._panel("stat", title, desc, w, h, [target("A", expr, instant=True)], unit)
        p["options"] = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                        "colorMode": "value", "graphMode": "area", "textMode": "auto"}
        if decimals is not None:
            p["fieldConfig"]["defaults"]["decimals"] = decimals
        return p

    def timeseries(self, title, desc, series, unit, w=12, h=8, stack=False, min0=True):
        """series: [(expr, legend)]"""
        targets = [target(chr(ord("A") + i), e, l) for i, (e, l) in enumerate(series)]
        p = self._panel("timeseries", title, desc, w, h, targets, unit)
        d = p["fieldConfig"]["defaults"]
        d["custom"] = {"drawStyle": "line", "lineWidth": 1, "fillOpacity": 20 if stack else 0,
                       "stacking": {"mode": "normal" if stack else "none", "group": "A"}}
        if min0:
            d["min"] = 0
        p["options"] = {"legend": {"displayMode": "table", "placement": "right", "calcs": ["lastNotNull"]},
                        "tooltip": {"mode": "multi", "sort": "desc"}}
        return p

    def bars(self, title, desc, expr, legend, unit, w=12, h=8):
        p = self._panel("bargauge", title, desc, w, h, [target("A", expr, legend, instant=True)], unit)
        p["options"] = {"orientation": "horizontal", "displayMode": "gradient", "showUnfilled": True,
                        "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False}}
        p["fieldConfig"]["defaults"]["min"] = 0
        return p

    def table(self, title, desc, columns, w=24, h=10, hide=(), sort=None):
        """columns: [(title, expr, unit)]; instant queries joined on their labels (merge)."""
        targets, overrides, rename = [], [], {}
        for i, (col, expr, unit) in enumerate(columns):
            ref = chr(ord("A") + i)
            targets.append(target(ref, expr, instant=True, table=True))
            value = "Value #" + ref if len(columns) > 1 else "Value"
            rename[value] = col
            props = [{"id": "unit", "value": unit}]
            if unit == "percentunit":
                props += [{"id": "custom.cellOptions", "value": {"type": "gauge", "mode": "basic"}},
                          {"id": "min", "value": 0}, {"id": "max", "value": 1}]
            overrides.append({"matcher": {"id": "byName", "options": col}, "properties": props})
        excluded = {"Time": True, "__name__": True}
        for h_ in hide:
            excluded[h_] = True
        p = self._panel("table", title, desc, w, h, targets, "none")
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
        def var(name, label, query, multi=True):
            return {
                "name": name, "label": label, "type": "query", "datasource": DS,
                "definition": query, "query": {"query": query, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
                "refresh": 2, "sort": 1, "multi": multi, "includeAll": True, "allValue": ".*",
                "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
                "options": [], "hide": 0, "regex": "",
            }
        return [
            var("cluster", "cluster", "label_values(gpuattr_cluster_up, cluster)"),
            var("namespace", "namespace", 'label_values(gpuattr_namespace_gpu_pods{cluster=~"$cluster"}, namespace)'),
            var("node", "node", 'label_values(%s{cluster=~"$cluster"}, node)' % self.node_query),
        ]

    def json(self):
        return {
            "__inputs": [{"name": "DS_PROMETHEUS", "label": "Prometheus", "description": "The Prometheus that scrapes gpuattr",
                          "type": "datasource", "pluginId": "prometheus", "pluginName": "Prometheus"}],
            "__requires": [
                {"type": "grafana", "id": "grafana", "name": "Grafana", "version": "10.4.0"},
                {"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"},
                {"type": "panel", "id": "timeseries", "name": "Time series", "version": ""},
                {"type": "panel", "id": "stat", "name": "Stat", "version": ""},
                {"type": "panel", "id": "table", "name": "Table", "version": ""},
                {"type": "panel", "id": "bargauge", "name": "Bar gauge", "version": ""},
                {"type": "panel", "id": "text", "name": "Text", "version": ""},
            ],
            "annotations": {"list": [{"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
                                      "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
                                      "name": "Annotations & Alerts", "type": "dashboard"}]},
            "description": self.description,
            "editable": True,
            "graphTooltip": 1,
            "id": None,
            "links": [{"type": "dashboards", "tags": ["gpuattr"], "asDropdown": True, "title": "gpuattr",
                       "includeVars": True, "keepTime": True}],
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


def namespaces():
    d = Dashboard("gpuattr-namespaces", "gpuattr / Namespaces",
                  "Whose GPUs are these: per namespace, devices requested vs in use vs GPU-equivalents, "
                  "utilisation, memory held and held idle, power, energy per day, pending pods.",
                  node_query="gpuattr_node_power_watts")
    d.stat("GPU-equivalents in use", "Whole GPU = 1, MIG slice = its share of the card.",
           f"sum(gpuattr_namespace_gpu_equivalents{{{CN}}})", "none", decimals=2)
    d.stat("Power", "Σ of the namespaces' attributed power (each card counted once).",
           f"sum(gpuattr_namespace_power_watts{{{CN}}})", "watt")
    d.stat("Memory held idle", "GPU memory held by idle pods (utilisation < 5 %, ≥ 256 MiB).",
           f"sum(gpuattr_namespace_memory_idle_bytes{{{CN}}})", "bytes")
    d.stat("Pending GPU pods", "Pods waiting for GPU resources.",
           f"sum(gpuattr_namespace_pending_pods{{{CN}}})", "none")
    d.table("Whose GPUs are these", "One row per namespace: what it asked for, what it uses, and what it wastes.", [
        ("requested devices", f"sum by (cluster, namespace) (gpuattr_namespace_requested_devices{{{CN}}})", "none"),
        ("devices in use", f"gpuattr_namespace_devices_in_use{{{CN}}}", "none"),
        ("GPU-equivalents", f"gpuattr_namespace_gpu_equivalents{{{CN}}}", "none"),
        ("GPU pods", f"gpuattr_namespace_gpu_pods{{{CN}}}", "none"),
        ("utilisation", f"gpuattr_namespace_utilization_ratio{{{CN}}}", "percentunit"),
        ("memory used", f"gpuattr_namespace_memory_used_bytes{{{CN}}}", "bytes"),
        ("memory idle", f"gpuattr_namespace_memory_idle_bytes{{{CN}}}", "bytes"),
        ("idle pods", f"gpuattr_namespace_idle_pods{{{CN}}}", "none"),
        ("power", f"gpuattr_namespace_power_watts{{{CN}}}", "watt"),
        ("energy 24 h", f"increase(gpuattr_namespace_energy_joules_total{{{CN}}}[1d])", "joule"),
        ("pending pods", f"gpuattr_namespace_pending_pods{{{CN}}}", "none"),
    ], sort="power")
    d.row("Requested, in use, GPU-equivalents")
    d.timeseries("Devices requested vs in use vs GPU-equivalents",
                 "Requested: Σ of GPU resources its pods hold (whole GPUs, slices, shares). In use: devices its pods "
                 "are seen on. GPU-equivalents: how much hardware that is.", [
                     (f"sum by (cluster, namespace) (gpuattr_namespace_requested_devices{{{CN}}})", "{{namespace}} requested"),
                     (f"gpuattr_namespace_devices_in_use{{{CN}}}", "{{namespace}} in use"),
                     (f"gpuattr_namespace_gpu_equivalents{{{CN}}}", "{{namespace}} GPU-equivalents"),
                 ], "none")
    d.timeseries("Utilisation", "GPU-equivalent-weighted mean utilisation of the namespace's devices.",
                 [(f"gpuattr_namespace_utilization_ratio{{{CN}}}", "{{namespace}}")], "percentunit")
    d.row("Memory, power, energy")
    d.timeseries("GPU memory held", "Σ of the namespace's pods' GPU memory.",
                 [(f"gpuattr_namespace_memory_used_bytes{{{CN}}}", "{{namespace}}")], "bytes", w=8, stack=True)
    d.timeseries("GPU memory held idle", "Memory held by the namespace's idle pods.",
                 [(f"gpuattr_namespace_memory_idle_bytes{{{CN}}}", "{{namespace}}")], "bytes", w=8, stack=True)
    d.timeseries("Power", "Attributed power per namespace (stacked: the total is the attributed part of the cards).",
                 [(f"gpuattr_namespace_power_watts{{{CN}}}", "{{namespace}}")], "watt", w=8, stack=True)
    d.bars("Energy per day", "increase() of the namespace's energy counter over the last 24 h.",
           f"sort_desc(increase(gpuattr_namespace_energy_joules_total{{{CN}}}[1d]))", "{{namespace}}", "joule")
    d.timeseries("Pending GPU pods", "Pods of the namespace waiting for GPU resources.",
                 [(f"gpuattr_namespace_pending_pods{{{CN}}}", "{{namespace}}")], "none")
    return d


def pods():
    d = Dashboard("gpuattr-pods", "gpuattr / Pods",
                  "Every GPU pod: devices, utilisation, memory, power, idleness and how its numbers were attributed; "
                  "and their history.")
    d.table("GPU pods", "One row per pod (instant values). attribution: process, dcgm_pod or even_split.", [
        ("devices", f"gpuattr_pod_devices{{{CNN}}}", "none"),
        ("GPU-equivalents", f"gpuattr_pod_gpu_equivalents{{{CNN}}}", "none"),
        ("utilisation", f"gpuattr_pod_utilization_ratio{{{CNN}}}", "percentunit"),
        ("memory used", f"gpuattr_pod_memory_used_bytes{{{CNN}}}", "bytes"),
        ("memory total", f"gpuattr_pod_memory_total_bytes{{{CNN}}}", "bytes"),
        ("power", f"gpuattr_pod_power_watts{{{CNN}}}", "watt"),
        ("idle", f"gpuattr_pod_idle{{{CNN}}}", "bool_yes_no"),
        ("idle for", f"gpuattr_pod_idle_seconds{{{CNN}}}", "s"),
        ("energy 24 h", f"increase(gpuattr_pod_energy_joules_total{{{CNN}}}[1d])", "joule"),
    ], h=12, sort="power")
    d.table("Pod → devices", "Which device each pod uses and how it shares it (exclusive, mig, time_sliced, unrequested).", [
        ("pod on device", f"gpuattr_pod_device{{{CNN}}}", "none"),
    ], w=12, h=10, hide=("Value",))
    d.table("Attribution method and requests", "How each pod's numbers were split, and the GPU resources it requested.", [
        ("attributed", f"gpuattr_pod_attribution{{{CN}}}", "none"),
        ("requested", f"gpuattr_pod_requested_devices{{{CN}}}", "none"),
    ], w=12, h=10, hide=("Value #A",))
    d.row("History (top 20)")
    d.timeseries("Pod power", "The pod's share of its devices' power.",
                 [(f"topk(20, gpuattr_pod_power_watts{{{CNN}}})", "{{namespace}}/{{pod}}")], "watt")
    d.timeseries("Pod utilisation", "Mean over the pod's devices (process tier: max of its processes).",
                 [(f"topk(20, gpuattr_pod_utilization_ratio{{{CNN}}})", "{{namespace}}/{{pod}}")], "percentunit")
    d.timeseries("Pod GPU memory", "GPU memory the pod holds.",
                 [(f"topk(20, gpuattr_pod_memory_used_bytes{{{CNN}}})", "{{namespace}}/{{pod}}")], "bytes")
    d.timeseries("Pod energy rate", "rate() of the pod's energy counter: its average power over the window.",
                 [(f"topk(20, rate(gpuattr_pod_energy_joules_total{{{CNN}}}[$__rate_interval]))", "{{namespace}}/{{pod}}")],
                 "watt")
    d.table("Pods using a GPU they did not request", "These pods hold no GPU resource but show up on a device.", [
        ("unrequested GPU use", f"gpuattr_pod_unrequested_gpu_use{{{CNN}}} == 1", "none"),
    ], h=6, hide=("Value",))
    return d


def devices():
    d = Dashboard("gpuattr-devices", "gpuattr / Devices and health",
                  "Cards and MIG slices: what each is, how busy, how hot, who is on it; health state and issues.")
    d.stat("Devices", "Whole GPUs and MIG slices seen.", f"count(gpuattr_device_info{{{CNODE}}})", "none")
    d.stat("Critical devices", "Devices whose health is critical.",
           f'count(gpuattr_device_health{{{CNODE}, state="critical"}} == 1) or vector(0)', "none")
    d.stat("Devices with a warning", "Devices whose health is warning.",
           f'count(gpuattr_device_health{{{CNODE}, state="warning"}} == 1) or vector(0)', "none")
    d.stat("Card power", "Σ of physical cards (each counted once).",
           f"sum(gpuattr_card_power_watts{{{CNODE}}})", "watt")
    d.table("Devices", "One row per whole GPU or MIG slice.", [
        ("info", f"gpuattr_device_info{{{CNODE}}}", "none"),
        ("utilisation", f"gpuattr_device_utilization_ratio{{{CNODE}}}", "percentunit"),
        ("memory used", f"gpuattr_device_memory_used_bytes{{{CNODE}}}", "bytes"),
        ("memory total", f"gpuattr_device_memory_total_bytes{{{CNODE}}}", "bytes"),
        ("power", f"gpuattr_device_power_watts{{{CNODE}}}", "watt"),
        ("temperature", f"gpuattr_device_temperature_celsius{{{CNODE}}}", "celsius"),
        ("pods", f"gpuattr_device_pods{{{CNODE}}}", "none"),
        ("health", f"max by (cluster, node, gpu, gpu_instance, state) (gpuattr_device_health{{{CNODE}}} == 1)", "none"),
    ], h=12, hide=("Value #A", "Value #H"))
    d.row("Health")
    d.table("Health issues", "Every current issue with its severity and what it means (detail).", [
        ("issue", f"gpuattr_device_health_issue{{{CNODE}}} == 1", "none"),
    ], w=16, h=9, hide=("Value",))
    d.table("Node health", "Worst device state per node.", [
        ("node health", f"gpuattr_node_health{{{CNODE}}} == 1", "none"),
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
    d.timeseries("Temperature", "GPU_TEMP per device.",
                 [(f"max by (cluster, node, gpu) (gpuattr_device_temperature_celsius{{{CNODE}}})", "{{node}} gpu {{gpu}}")],
                 "celsius", w=8)
    d.table("Possible owners of devices without pod labels", "gpuattr never guesses an owner: these pods may use the device.", [
        ("candidate", f"gpuattr_device_candidate_pod{{{CNN}}}", "none"),
    ], h=6, hide=("Value",))
    return d


IDLE = f"on ({POD_KEYS}) gpuattr_pod_idle{{{CNN}}} == 1"


def idle():
    d = Dashboard("gpuattr-idle", "gpuattr / Idle and waste",
                  "Idle pods by GPU memory held and idle duration; reclaimable capacity beside pending demand.")
    d.stat("Idle GPU pods", "Pods under the idle threshold holding memory.",
           f"sum(gpuattr_namespace_idle_pods{{{CN}}})", "none")
    d.stat("Memory held idle", "GPU memory held by idle pods.",
           f"sum(gpuattr_namespace_memory_idle_bytes{{{CN}}})", "bytes")
    d.stat("GPU-equivalents held idle", "Hardware idle pods keep from others.",
           f"sum(gpuattr_pod_gpu_equivalents{{{CNN}}} and {IDLE}) or vector(0)", "none", decimals=2)
    d.stat("Unattributed power", "Power of cards (or slices) no pod is attributed to.",
           f"sum(gpuattr_node_unattributed_power_watts{{{C}, node=~\"$node\"}})", "watt")
    d.table("Idle pods", "Sorted by memory held. Idle for: gpuattr's count of the current idle run.", [
        ("memory held", f"gpuattr_pod_memory_used_bytes{{{CNN}}} and {IDLE}", "bytes"),
        ("idle for", f"gpuattr_pod_idle_seconds{{{CNN}}} and {IDLE}", "s"),
        ("GPU-equivalents", f"gpuattr_pod_gpu_equivalents{{{CNN}}} and {IDLE}", "none"),
        ("utilisation", f"gpuattr_pod_utilization_ratio{{{CNN}}} and {IDLE}", "percentunit"),
        ("power", f"gpuattr_pod_power_watts{{{CNN}}} and {IDLE}", "watt"),
    ], h=10, sort="memory held")
    d.row("Reclaimable capacity beside pending demand")
    d.table("Per resource: held idle, free, pending", (
        "held idle: devices requested by idle pods; free: allocatable − requested over all nodes; pending: pods "
        "waiting for the resource."), [
        ("held by idle pods", f"sum by (cluster, resource) (gpuattr_pod_requested_devices{{{CN}}} "
                              f"and on (cluster, namespace, pod) (gpuattr_pod_idle{{{CN}}} == 1))", "none"),
        ("free", f"sum by (cluster, resource) (gpuattr_node_resource_free{{{C}, node=~\"$node\"}})", "none"),
        ("pending pods", f"count by (cluster, resource) (gpuattr_pending_pod_hint{{{CN}}})", "none"),
    ], w=12, h=9)
    d.timeseries("Idle vs pending", "Idle GPU-equivalents (could be freed) against pods waiting for GPUs.", [
        (f"sum by (cluster) (gpuattr_pod_gpu_equivalents{{{CNN}}} and {IDLE})", "{{cluster}} idle GPU-equivalents"),
        (f"sum by (cluster) (gpuattr_namespace_pending_pods{{{CN}}})", "{{cluster}} pending pods"),
    ], "none")
    d.row("History")
    d.timeseries("Memory held idle per namespace", "", [
        (f"gpuattr_namespace_memory_idle_bytes{{{CN}}}", "{{namespace}}")], "bytes", stack=True)
    d.timeseries("Longest idle runs", "gpuattr_pod_idle_seconds of the 10 longest idle pods.", [
        (f"topk(10, gpuattr_pod_idle_seconds{{{CNN}}} and {IDLE})", "{{namespace}}/{{pod}}")], "s")
    d.timeseries("Unattributed power per node", "Cards and slices no pod uses still draw power.", [
        (f"gpuattr_node_unattributed_power_watts{{{C}, node=~\"$node\"}}", "{{node}}")], "watt")
    d.timeseries("Idle pods per namespace", "", [
        (f"gpuattr_namespace_idle_pods{{{CN}}}", "{{namespace}}")], "none")
    return d


def allocation():
    d = Dashboard("gpuattr-allocation", "gpuattr / Allocation and pending",
                  "The scheduler's view: per node capacity, requested and busy devices; MIG free per profile; "
                  "pending pods with hints.", node_query="gpuattr_node_devices_capacity")
    d.table("Nodes", "Devices per node: capacity and allocatable (kubelet), unhealthy, requested by pods, busy "
            "(used by a pod), seen (in an exporter).", [
        ("capacity", f"gpuattr_node_devices_capacity{{{CNODE}}}", "none"),
        ("allocatable", f"gpuattr_node_devices_allocatable{{{CNODE}}}", "none"),
        ("unhealthy", f"gpuattr_node_devices_unhealthy{{{CNODE}}}", "none"),
        ("requested", f"gpuattr_node_devices_requested{{{CNODE}}}", "none"),
        ("busy", f"gpuattr_node_devices_busy{{{CNODE}}}", "none"),
        ("seen", f"gpuattr_node_devices_seen{{{CNODE}}}", "none"),
    ], h=8)
    d.timeseries("Capacity vs requested vs busy", "Σ over the selected nodes.", [
        (f"sum by (cluster) (gpuattr_node_devices_capacity{{{CNODE}}})", "{{cluster}} capacity"),
        (f"sum by (cluster) (gpuattr_node_devices_requested{{{CNODE}}})", "{{cluster}} requested"),
        (f"sum by (cluster) (gpuattr_node_devices_busy{{{CNODE}}})", "{{cluster}} busy"),
    ], "none")
    d.bars("Requested share per node", "requested / allocatable devices.",
           f"gpuattr_node_devices_requested{{{CNODE}}} / gpuattr_node_devices_allocatable{{{CNODE}}}",
           "{{node}}", "percentunit")
    d.row("Resources and MIG profiles")
    d.table("Per node and resource", "allocatable, requested, free = max(0, allocatable − requested).", [
        ("allocatable", f"gpuattr_node_resource_allocatable{{{CNODE}}}", "none"),
        ("requested", f"gpuattr_node_resource_requested{{{CNODE}}}", "none"),
        ("free", f"gpuattr_node_resource_free{{{CNODE}}}", "none"),
    ], w=14, h=10)
    d.bars("MIG slices free per profile", "Free MIG slices over the selected nodes, by profile.",
           f'sum by (resource) (gpuattr_node_resource_free{{{CNODE}, resource=~"nvidia.com/mig-.*"}})',
           "{{resource}}", "none", w=10, h=10)
    d.row("Pending pods")
    d.table("Pending pods and why", "hint: waiting_for_free_device (it will fit when a device frees up), or resource_not_offered, mig_partitioned, "
            "exceeds_node_max, dra_no_device, dra_exceeds_node_max (never fits as asked).", [
        ("hint", f"gpuattr_pending_pod_hint{{{CN}}}", "none"),
        ("pending for", f"max by (cluster, namespace, pod) (gpuattr_pending_pod_seconds{{{CN}}})", "s"),
    ], h=9, hide=("Value #A",), sort="pending for")
    d.timeseries("Pending GPU pods per namespace", "", [
        (f"gpuattr_namespace_pending_pods{{{CN}}}", "{{namespace}}")], "none")
    d.timeseries("Longest pending", "", [
        (f"topk(10, gpuattr_pending_pod_seconds{{{CN}}})", "{{namespace}}/{{pod}}")], "s")
    return d


def inference():
    d = Dashboard("gpuattr-inference", "gpuattr / Inference",
                  "vLLM and SGLang servers found on the cluster: KV cache, queues, throughput, latency, "
                  "saturation and tokens per joule.")
    d.table("Inference servers", "One row per server pod and model.", [
        ("KV cache", f"gpuattr_inference_kv_cache_usage_ratio{{{CN}}}", "percentunit"),
        ("running", f"gpuattr_inference_requests_running{{{CN}}}", "none"),
        ("waiting", f"gpuattr_inference_requests_waiting{{{CN}}}", "none"),
        ("generated tokens/s", f"gpuattr_inference_generation_tokens_per_second{{{CN}}}", "none"),
        ("prompt tokens/s", f"gpuattr_inference_prompt_tokens_per_second{{{CN}}}", "none"),
        ("time to first token", f"gpuattr_inference_time_to_first_token_seconds{{{CN}}}", "s"),
        ("saturated", f"gpuattr_inference_saturated{{{CN}}}", "bool_yes_no"),
        ("tokens per joule", f"gpuattr_inference_generation_tokens_per_joule{{{CN}}}", "none"),
    ], h=8)
    leg = "{{namespace}}/{{pod}} {{model}}"
    d.timeseries("KV cache usage", "", [(f"gpuattr_inference_kv_cache_usage_ratio{{{CN}}}", leg)], "percentunit", w=8)
    d.timeseries("Requests running and waiting", "", [
        (f"gpuattr_inference_requests_running{{{CN}}}", leg + " running"),
        (f"gpuattr_inference_requests_waiting{{{CN}}}", leg + " waiting")], "none", w=8)
    d.timeseries("Saturated", "1 while the server queues requests with a full KV cache.", [
        (f"gpuattr_inference_saturated{{{CN}}}", leg)], "none", w=8)
    d.timeseries("Tokens per second", "", [
        (f"gpuattr_inference_generation_tokens_per_second{{{CN}}}", leg + " generated"),
        (f"gpuattr_inference_prompt_tokens_per_second{{{CN}}}", leg + " prompt")], "none", w=8)
    d.timeseries("Time to first token", "", [
        (f"gpuattr_inference_time_to_first_token_seconds{{{CN}}}", leg)], "s", w=8)
    d.timeseries("Generated tokens per joule", "Generated tokens/s ÷ the pod's attributed power.", [
        (f"gpuattr_inference_generation_tokens_per_joule{{{CN}}}", leg)], "none", w=8)
    return d


def self_dash():
    d = Dashboard("gpuattr-self", "gpuattr / gpuattr itself",
                  "Is gpuattr healthy: clusters reached, data age, cycle duration, exporters found, scrape "
                  "latency and size, apiserver requests.")
    d.stat("Clusters up", "Clusters whose latest cycle reached the apiserver.",
           f"sum(gpuattr_cluster_up{{{C}}})", "none")
    d.stat("Data age", "time() − end of the latest successful cycle.",
           f"max(time() - gpuattr_last_cycle_timestamp_seconds{{{C}}})", "s")
    d.stat("Cycle duration", "Wall time of the latest cycle.", f"max(gpuattr_cycle_duration_seconds{{{C}}})", "s")
    d.stat("Exporters up", "Exporters whose last scrape succeeded.",
           f"sum(gpuattr_exporter_up{{{CNN}}})", "none")
    d.table("Clusters", "Per cluster: build, up, data age, cycle duration.", [
        ("build", f"gpuattr_build_info{{{C}}}", "none"),
        ("up", f"gpuattr_cluster_up{{{C}}}", "bool_yes_no"),
        ("data age", f"time() - gpuattr_last_cycle_timestamp_seconds{{{C}}}", "s"),
        ("cycle duration", f"gpuattr_cycle_duration_seconds{{{C}}}", "s"),
    ], w=12, h=6, hide=("Value #A",))
    d.table("Discovery candidates", "Probed pods by outcome (accepted, unrecognised, error, pinned).", [
        ("candidates", f"gpuattr_discovery_candidates{{{C}}}", "none"),
    ], w=12, h=6)
    d.table("Exporters", "Every exporter found (kind: dcgm, process, vllm, sglang, prometheus, unknown).", [
        ("up", f"gpuattr_exporter_up{{{CNN}}}", "bool_yes_no"),
        ("scrape duration", f"gpuattr_exporter_scrape_duration_seconds{{{CNN}}}", "s"),
        ("scrape bytes", f"gpuattr_exporter_scrape_bytes{{{CNN}}}", "bytes"),
        ("parse errors", f"gpuattr_exporter_parse_errors{{{CNN}}}", "none"),
    ], h=9)
    d.row("History")
    d.timeseries("Data age", "Grows when cycles stop succeeding.", [
        (f"time() - gpuattr_last_cycle_timestamp_seconds{{{C}}}", "{{cluster}}")], "s", w=8)
    d.timeseries("Cycle duration", "", [(f"gpuattr_cycle_duration_seconds{{{C}}}", "{{cluster}}")], "s", w=8)
    d.timeseries("Exporters found", "By kind: up vs all.", [
        (f"sum by (cluster, kind) (gpuattr_exporter_up{{{CNN}}})", "{{cluster}} {{kind}} up"),
        (f"count by (cluster, kind) (gpuattr_exporter_up{{{CNN}}})", "{{cluster}} {{kind}} found")], "none", w=8)
    d.timeseries("Scrape latency", "Through the apiserver's pod proxy.", [
        (f"gpuattr_exporter_scrape_duration_seconds{{{CNN}}}", "{{namespace}}/{{pod}}")], "s", w=8)
    d.timeseries("Scrape bytes", "", [
        (f"gpuattr_exporter_scrape_bytes{{{CNN}}}", "{{namespace}}/{{pod}}")], "bytes", w=8)
    d.timeseries("Parse errors", "Malformed lines in the last body (the good lines still count).", [
        (f"gpuattr_exporter_parse_errors{{{CNN}}}", "{{namespace}}/{{pod}}")], "none", w=8)
    d.timeseries("Apiserver requests", "Requests per second by verb, resource and code (steady state: no LISTs).", [
        (f"sum by (cluster, verb, resource, code) (rate(gpuattr_apiserver_requests_total{{{C}}}[$__rate_interval]))",
         "{{cluster}} {{verb}} {{resource}} {{code}}")], "reqps")
    d.timeseries("Apiserver errors", "Requests that did not answer 2xx.", [
        (f'sum by (cluster, code) (rate(gpuattr_apiserver_requests_total{{{C}, code!~"2.."}}[$__rate_interval]))',
         "{{cluster}} {{code}}")], "reqps")
    return d


def main():
    # --check: write nothing, exit 1 when a committed file differs from what this script makes.
    check = "--check" in sys.argv[1:]
    OUT.mkdir(exist_ok=True)
    stale = []
    for build in (namespaces, pods, devices, idle, allocation, inference, self_dash):
        d = build()
        path = OUT / (d.uid.removeprefix("gpuattr-") + ".json")
        text = json.dumps(d.json(), indent=2, ensure_ascii=False) + "\n"
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
        else:
            path.write_text(text)
    if stale:
        print("out of date (run python3 grafana/generate.py): " + ", ".join(stale), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
