// The groups of config/prometheus/gpuattr-alerts.yml (and of the PrometheusRule), from the mixin
// with its default _config, as JSON: scripts/gen-mixin.py writes them as YAML (the C++ jsonnet's
// std.manifestYamlDoc takes 15 s on these texts; its JSON output a fraction of a second).
// Alerts and rules only: the dashboards are not needed here.
local mixin = (import '../config.libsonnet') + (import '../alerts/alerts.libsonnet') +
              (import '../rules/rules.libsonnet');
{
  config: mixin._config,
  groups: mixin.prometheusAlerts.groups + mixin.prometheusRules.groups,
}
