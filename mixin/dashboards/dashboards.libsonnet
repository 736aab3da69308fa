// The dashboards of grafana/dashboards/, which grafana/generate.py writes with the default
// selector in every gpuattr query (job="gpuattr": `selectorInFiles`), retargeted to
// _config.selector. Keys are the file names the Grafana sidecar ConfigMaps use
// (grafana/kustomization.yaml). The firing-alerts annotation (ALERTS{alertname=~"Gpuattr.*"}) has
// no selector: ALERTS carries the alert's labels, which most alerts aggregate the job away from.
local selectorInFiles = 'job="gpuattr"';
local files = {
  allocation: import '../../grafana/dashboards/allocation.json',
  chargeback: import '../../grafana/dashboards/chargeback.json',
  devices: import '../../grafana/dashboards/devices.json',
  idle: import '../../grafana/dashboards/idle.json',
  inference: import '../../grafana/dashboards/inference.json',
  namespaces: import '../../grafana/dashboards/namespaces.json',
  pending: import '../../grafana/dashboards/pending.json',
  pods: import '../../grafana/dashboards/pods.json',
  'self': import '../../grafana/dashboards/self.json',
};

// Every string of the dashboard (queries, variable definitions) with the selector replaced.
local retarget(value, selector) =
  if std.isString(value) then std.strReplace(value, selectorInFiles, selector)
  else if std.isArray(value) then [retarget(v, selector) for v in value]
  else if std.isObject(value) then { [k]: retarget(value[k], selector) for k in std.objectFields(value) }
  else value;

{
  grafanaDashboards+:: {
    ['gpuattr-%s.json' % name]:
      if $._config.selector == selectorInFiles then files[name]
      else retarget(files[name], $._config.selector)
    for name in std.objectFields(files)
  },
}
