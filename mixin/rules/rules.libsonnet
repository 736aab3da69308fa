// Recording rules, not alerts: the bill's daily totals (docs/accounting.md#in-prometheus), the
// increase of gpuattr's GPU-hour and cost counters over the last 24 h at each evaluation, per
// namespace, team and idle. Kept per job and instance like gpuattr's own series (two gpuattr
// processes watching one cluster would otherwise count it twice; the dashboards filter on both
// and add up a sharded install's instances). The Chargeback dashboard reads them.
{
  prometheusRules+:: {
    groups+: [
      {
        name: 'gpuattr-chargeback',
        rules: [
          {
            record: 'namespace_basis:gpuattr_gpu_hours:increase1d',
            expr: 'sum by (cluster, job, instance, namespace, basis) (increase(gpuattr_namespace_gpu_hours_total{%(selector)s}[1d]))' % $._config,
          },
          {
            record: 'namespace_basis_currency:gpuattr_cost:increase1d',
            expr: 'sum by (cluster, job, instance, namespace, basis, currency) (increase(gpuattr_namespace_cost_total{%(selector)s}[1d]))' % $._config,
          },
          {
            record: 'cluster_basis:gpuattr_idle_gpu_hours:increase1d',
            expr: 'sum by (cluster, job, instance, basis) (increase(gpuattr_node_idle_gpu_hours_total{%(selector)s}[1d]))' % $._config,
          },
          {
            record: 'cluster_basis_currency:gpuattr_idle_cost:increase1d',
            expr: 'sum by (cluster, job, instance, basis, currency) (increase(gpuattr_node_idle_cost_total{%(selector)s}[1d]))' % $._config,
          },
          {
            // accounting.namespace_labels' default `team`; a namespace without it lands in
            // label_team="". Only shard 0 of a sharded install publishes the labels: the join is on
            // the job, not the instance, so every shard's cost finds its namespace's team.
            record: 'team_basis_currency:gpuattr_cost:increase1d',
            expr: |||
              sum by (cluster, job, instance, label_team, basis, currency) (
                namespace_basis_currency:gpuattr_cost:increase1d{%(selector)s}
                  * on (cluster, job, namespace) group_left (label_team)
                    max by (cluster, job, namespace, label_team) (gpuattr_namespace_labels{%(selector)s})
              )
            ||| % $._config,
          },
        ],
      },
    ],
  },
}
