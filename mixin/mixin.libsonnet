// gpuattr's monitoring mixin (the kube-prometheus convention): prometheusAlerts,
// prometheusRules and grafanaDashboards, retargeted by _config (config.libsonnet).
(import 'config.libsonnet') +
(import 'alerts/alerts.libsonnet') +
(import 'rules/rules.libsonnet') +
(import 'dashboards/dashboards.libsonnet')
