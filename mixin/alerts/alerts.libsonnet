// gpuattr's alerts (docs/alerts.md has a runbook per alert, at the anchor runbook_url points to).
// Every alert has a severity label, a static summary (it names the alert's kind, so notifications
// group and dedupe), a description with the details, a runbook and a runbook_url. Every series
// selector carries _config.selector; thresholds and the runbook base come from _config
// (config.libsonnet). Labels that carry changing text (the pending hint's message, a health
// issue's detail) are aggregated away: an alert's identity never depends on them.
local hours(h) = if h == 1 then 'an hour' else '%s hours' % h;

{
  prometheusAlerts+:: {
    groups+: [
      {
        name: 'gpuattr-waste',
        rules: [
          {
            // Idle = utilisation below gpuattr's idle threshold (5 %) while holding memory. The pod
            // must have been idle for an hour by gpuattr's own count (survives Prometheus restarts)
            // and hold at least 1 GiB.
            alert: 'GpuattrPodIdleVram',
            expr: |||
              gpuattr_pod_memory_used_bytes{%(selector)s} >= %(podIdleVramGiB)s * 1073741824
                and on (cluster, namespace, pod, node) gpuattr_pod_idle{%(selector)s} == 1
                and on (cluster, namespace, pod, node) gpuattr_pod_idle_seconds{%(selector)s} >= %(podIdleHours)s * 3600
            ||| % $._config,
            'for': '5m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'A pod holds GPU memory and has been idle for over %s' % hours($._config.podIdleHours),
              description: '{{ $labels.namespace }}/{{ $labels.pod }} on node {{ $labels.node }} (cluster {{ $labels.cluster }}) keeps {{ $value | humanize1024 }}B of VRAM allocated while its GPU utilisation has stayed below the idle threshold for at least %(podIdleHours)s h. The device (or MIG slice) cannot be used by anyone else meanwhile.' % $._config,
              runbook: 'Open the "gpuattr / Idle and waste" dashboard to see how long the pod has been idle and whether pods are pending for the same resource. Ask the owner (namespace {{ $labels.namespace }}) whether the job is finished or stuck: a notebook kernel or an inference server without traffic keeps its memory. If nobody needs it, delete the pod or scale its workload to zero; for notebooks, consider an idle culler.',
              runbook_url: '%(runbookURLBase)s#gpuattrpodidlevram' % $._config,
            },
          },
          {
            // warning, not info: kube-prometheus-stack's InfoInhibitor mutes every info alert unless a
            // warning or critical alert fires in the same `namespace` (a missing label counts as the
            // same empty namespace), so an info alert about a workload namespace is never delivered
            // on its own (docs/alerts.md#severities-and-kube-prometheus-stack).
            alert: 'GpuattrNamespaceIdleVram',
            expr: 'gpuattr_namespace_memory_idle_bytes{%(selector)s} >= %(namespaceIdleVramGiB)s * 1073741824' % $._config,
            'for': '1h',
            labels: { severity: 'warning' },
            annotations: {
              summary: "A namespace's idle pods hold over %(namespaceIdleVramGiB)s GiB of GPU memory" % $._config,
              description: 'Idle pods of namespace {{ $labels.namespace }} (cluster {{ $labels.cluster }}) together have held at least %(namespaceIdleVramGiB)s GiB of GPU memory for an hour ({{ $value | humanize1024 }}B now).' % $._config,
              runbook: 'Open "gpuattr / Idle and waste" filtered on the namespace: the table lists its idle pods by memory held and idle duration. Share it with the namespace owners and ask them to release what they do not use; if this is a standing pattern, set a quota on GPU resources for the namespace.',
              runbook_url: '%(runbookURLBase)s#gpuattrnamespaceidlevram' % $._config,
            },
          },
          {
            // A pod on a GPU without a GPU resource or DRA claim (e.g. NVIDIA_VISIBLE_DEVICES=all):
            // the scheduler counts that GPU as free and may place another pod on it.
            alert: 'GpuattrUnrequestedGpuUse',
            expr: 'gpuattr_pod_unrequested_gpu_use{%(selector)s} == 1' % $._config,
            'for': '10m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'A pod uses a GPU it did not request',
              description: "{{ $labels.namespace }}/{{ $labels.pod }} on node {{ $labels.node }} (cluster {{ $labels.cluster }}) has used a GPU for 10 min without requesting a GPU resource or DRA device. The scheduler does not know: it may place another pod on the same GPU, and the pod's use is not charged to its namespace's requests.",
              runbook: "Look at the pod's spec (kubectl -n {{ $labels.namespace }} get pod {{ $labels.pod }} -o yaml): usually an image or env that sets NVIDIA_VISIBLE_DEVICES=all, or a privileged container that sees every GPU. Ask the owner to request the GPU (nvidia.com/gpu or a MIG resource) and drop the variable; the GPU operator can refuse such pods (DEVICE_LIST_STRATEGY=volume-mounts, or an admission policy).",
              runbook_url: '%(runbookURLBase)s#gpuattrunrequestedgpuuse' % $._config,
            },
          },
          {
            // A workload whose rightsizing recommendation (docs/rightsizing.md) would give back at
            // least one GPU-equivalent, steadily for a day: a hint for its owners, not an outage.
            // warning, not info, for the reason GpuattrNamespaceIdleVram gives.
            alert: 'GpuattrWorkloadOversized',
            expr: 'gpuattr_workload_reclaimable_gpu_equivalents{%(selector)s} >= 1' % $._config,
            'for': '1d',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'A workload holds at least one GPU more than it has used',
              description: '{{ $labels.workload_kind }} {{ $labels.namespace }}/{{ $labels.workload }} (cluster {{ $labels.cluster }}) could give back {{ $value | printf "%.2f" }} GPU-equivalents by following its rightsizing recommendation, and has for a day.',
              runbook: 'Look up gpuattr_workload_recommendation for the workload: current, recommended and reason, with its peak memory and p95 utilisation (the "Rightsizing" row of "gpuattr / Namespaces"). Check what the recommendation does not know (bursts shorter than the interval, whether the software runs on a MIG slice or a shared GPU), then ask the owners to request the recommended profile or share.',
              runbook_url: '%(runbookURLBase)s#gpuattrworkloadoversized' % $._config,
            },
          },
        ],
      },
      {
        name: 'gpuattr-health',
        rules: [
          {
            // Once per physical card: gpuattr_device_health has one series set per card (no
            // gpu_instance) and a slice's own only where its state differs from the card's, so a
            // card with seven slices is one alert, not seven, whichever of them is critical.
            alert: 'GpuattrDeviceCritical',
            expr: 'max by (cluster, node, gpu) (gpuattr_device_health{%(selector)s, state="critical"}) == 1' % $._config,
            'for': '1m',
            labels: { severity: 'critical' },
            annotations: {
              summary: 'A GPU is in critical health',
              description: 'GPU {{ $labels.gpu }} on node {{ $labels.node }} (cluster {{ $labels.cluster }}) reports a critical health issue (e.g. an XID that needs a reset, double-bit ECC errors, a failed row remap), on the card or on one of its MIG slices.',
              runbook: 'Look up the issue and its meaning on "gpuattr / Devices and health" (the detail column of gpuattr_device_health_issue). Cordon the node (kubectl cordon {{ $labels.node }}), let the pods on that GPU finish or move them, then have the node drained and the GPU reset or replaced (nvidia-smi -r, or a reboot). Row-remap failures and repeated double-bit ECC errors mean an RMA.',
              runbook_url: '%(runbookURLBase)s#gpuattrdevicecritical' % $._config,
            },
          },
          {
            // Once per card and throttle reason; the issue's detail text is not part of the alert.
            alert: 'GpuattrDeviceThrottling',
            expr: 'max by (cluster, node, gpu, issue) (gpuattr_device_health_issue{%(selector)s, issue=~"throttle_.*", severity=~"warning|critical"}) == 1' % $._config,
            'for': '15m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'A GPU is throttled',
              description: 'GPU {{ $labels.gpu }} on node {{ $labels.node }} (cluster {{ $labels.cluster }}) has reported {{ $labels.issue }} for 15 min. Its clocks are lowered, so the jobs on it run slower.',
              runbook: "Thermal or hardware slowdown: check the temperature panel of \"gpuattr / Devices and health\" and the node's cooling (fans, airflow, data-centre inlet temperature) and power supply. A power-brake slowdown points at the PSU or the chassis. If it persists, cordon the node and open a hardware ticket.",
              runbook_url: '%(runbookURLBase)s#gpuattrdevicethrottling' % $._config,
            },
          },
          {
            // capacity > allocatable: the device plugin took GPUs (or MIG slices) out of scheduling.
            alert: 'GpuattrNodeDevicesUnhealthy',
            expr: 'gpuattr_node_devices_unhealthy{%(selector)s} > 0' % $._config,
            'for': '10m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'A node has GPU devices the device plugin marks unhealthy',
              description: 'Node {{ $labels.node }} (cluster {{ $labels.cluster }}) has had {{ $value }} GPU device(s) more in capacity than allocatable for 10 min: the NVIDIA device plugin (or the DRA driver) reports them unhealthy and the scheduler no longer places pods on them.',
              runbook: "See the node on \"gpuattr / Allocation\" and its cards on \"gpuattr / Devices and health\" (XIDs, ECC). Check the device plugin's log on the node (kubectl -n gpu-operator logs the nvidia-device-plugin pod of {{ $labels.node }}) for the reason; a GPU that fell off the bus or has uncorrectable errors needs the node drained and the GPU reset or replaced.",
              runbook_url: '%(runbookURLBase)s#gpuattrnodedevicesunhealthy' % $._config,
            },
          },
        ],
      },
      {
        name: 'gpuattr-scheduling',
        rules: [
          {
            // Hints that no amount of waiting fixes: the resource or shape asked for does not exist.
            alert: 'GpuattrPendingPodNeverFits',
            expr: 'max by (cluster, namespace, pod, resource, hint) (gpuattr_pending_pod_hint{%(selector)s, hint=~"resource_not_offered|mig_partitioned|exceeds_node_max|dra_no_device|dra_exceeds_node_max"}) == 1' % $._config,
            'for': '5m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'A pending GPU pod can never be scheduled as it asks',
              description: '{{ $labels.namespace }}/{{ $labels.pod }} (cluster {{ $labels.cluster }}) is pending for {{ $labels.resource }} and no node can ever satisfy it ({{ $labels.hint }}). {{ with printf "gpuattr_pending_pod_hint{cluster=%q,namespace=%q,pod=%q,resource=%q}" $labels.cluster $labels.namespace $labels.pod $labels.resource | query }}{{ range . }}{{ .Labels.message }}{{ end }}{{ end }}',
              runbook: 'Tell the owner to change the request: resource_not_offered - no node advertises that resource (a typo, or a MIG profile that is not configured); mig_partitioned - whole GPUs were asked for but the cards are split into MIG slices (ask for a slice, or re-partition a node); exceeds_node_max / dra_exceeds_node_max - more devices than any single node has (split the job); dra_no_device - no ResourceSlice offers a device matching the claim. See "gpuattr / Pending pods".',
              runbook_url: '%(runbookURLBase)s#gpuattrpendingpodneverfits' % $._config,
            },
          },
          {
            // The signature alert: a pod waits for a free device of a resource while idle pods hold
            // devices of that same resource. The value is how many of them idle pods hold. Devices
            // only: time-slicing replicas are never added to devices.
            alert: 'GpuattrPendingPodBlockedByIdlePods',
            expr: |||
              max by (cluster, namespace, pod, resource) (gpuattr_pending_pod_hint{%(selector)s, hint="waiting_for_free_device"} == 1)
                * on (cluster, resource) group_left ()
              (
                sum by (cluster, resource) (
                  gpuattr_pod_requested_devices{%(selector)s}
                    and on (cluster, namespace, pod) gpuattr_pod_idle{%(selector)s} == 1
                ) > 0
              )
            ||| % $._config,
            'for': '15m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'A GPU pod waits for a resource that idle pods hold',
              description: '{{ $labels.namespace }}/{{ $labels.pod }} (cluster {{ $labels.cluster }}) has waited 15 min for a free {{ $labels.resource }} while idle pods hold {{ $value }} device(s) of that resource.',
              runbook: 'Open "gpuattr / Pending pods" (the per-resource table: held by idle pods, free, pending) and "gpuattr / Idle and waste" filtered on nothing: the idle pods holding {{ $labels.resource }} are listed with their owners and idle time. Ask those owners to release the devices (delete or scale down idle notebooks and servers), or give the waiting workload a higher PriorityClass so the scheduler may preempt. A standing pattern calls for an idle culler.',
              runbook_url: '%(runbookURLBase)s#gpuattrpendingpodblockedbyidlepods' % $._config,
            },
          },
        ],
      },
      {
        name: 'gpuattr-inference',
        rules: [
          {
            // gpuattr_inference_saturated: requests wait and the KV cache is >= 90 % full.
            alert: 'GpuattrInferenceSaturated',
            expr: 'gpuattr_inference_saturated{%(selector)s} == 1' % $._config,
            'for': '10m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'An inference server has been saturated for 10 minutes',
              description: '{{ $labels.engine }} server {{ $labels.namespace }}/{{ $labels.pod }} (model {{ $labels.model }}, cluster {{ $labels.cluster }}) has queued requests with a KV cache at least 90 % full for 10 min: new requests wait and time to first token grows.',
              runbook: 'See "gpuattr / Inference": KV cache, waiting requests and time to first token. Add replicas (or GPUs per replica), lower max_num_seqs / max_model_len, or shed load upstream; frequent preemptions mean the KV cache is too small for the traffic.',
              runbook_url: '%(runbookURLBase)s#gpuattrinferencesaturated' % $._config,
            },
          },
        ],
      },
      {
        name: 'gpuattr-self',
        rules: [
          {
            alert: 'GpuattrExporterDown',
            expr: 'gpuattr_exporter_up{%(selector)s} == 0' % $._config,
            'for': '5m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'A GPU exporter cannot be scraped',
              description: "gpuattr has failed to read {{ $labels.namespace }}/{{ $labels.pod }} ({{ $labels.kind }}) on node {{ $labels.node }} (cluster {{ $labels.cluster }}) through the pod proxy for 5 min. The node's GPUs keep their last good numbers or drop out of the attribution.",
              runbook: 'The status page of gpuattr (http://127.0.0.1:9787/) shows the reason of the last failure. Check the pod (kubectl -n {{ $labels.namespace }} describe pod {{ $labels.pod }}; logs of dcgm-exporter often show a DCGM or driver problem), and that your credentials may get pods/proxy (config/kubernetes/clusterrole.yaml).',
              runbook_url: '%(runbookURLBase)s#gpuattrexporterdown' % $._config,
            },
          },
          {
            // warning, not critical: gpuattr runs on a workstation, and a laptop asleep or off the VPN
            // must page nobody.
            alert: 'GpuattrClusterDown',
            expr: 'gpuattr_cluster_up{%(selector)s} == 0' % $._config,
            'for': '5m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'gpuattr cannot reach a cluster',
              description: "gpuattr's last cycles for cluster {{ $labels.cluster }} did not reach the apiserver or could not list what they need. Its GPU series are stale or missing.",
              runbook: "Look at gpuattr's log and status page: an expired token or exec-plugin credential (re-login, e.g. your cloud CLI), a 403 naming a missing permission (config/kubernetes/clusterrole.yaml), a VPN that is down, or the apiserver itself.",
              runbook_url: '%(runbookURLBase)s#gpuattrclusterdown' % $._config,
            },
          },
          {
            // Stale: no successful cycle for 3 intervals (gpuattr_cycle_interval_seconds, the
            // configured --interval), and at least 60 s. A gpuattr too old to publish its interval is
            // held to 180 s.
            alert: 'GpuattrStale',
            expr: |||
              time() - gpuattr_last_cycle_timestamp_seconds{%(selector)s}
                > (
                  clamp_min(%(staleIntervals)s * gpuattr_cycle_interval_seconds{%(selector)s}, %(staleMinSeconds)s)
                    or 0 * gpuattr_last_cycle_timestamp_seconds{%(selector)s} + 180
                )
            ||| % $._config,
            'for': '2m',
            labels: { severity: 'warning' },
            annotations: {
              summary: "gpuattr's data for a cluster is stale",
              description: 'No cycle of gpuattr has completed for cluster {{ $labels.cluster }} for {{ $value | humanizeDuration }} (more than %(staleIntervals)s intervals): it serves its last good data.' % $._config,
              runbook: "Check whether the cluster answers (GpuattrClusterDown), then gpuattr's log for slow cycles (gpuattr_cycle_duration_seconds on \"gpuattr / gpuattr itself\") and restart gpuattr if it hangs.",
              runbook_url: '%(runbookURLBase)s#gpuattrstale' % $._config,
            },
          },
          {
            // job="gpuattr" is a parameter: the job_name of the scrape config (see the top of this file).
            // A target that exists and fails; GpuattrTargetMissing covers no target at all.
            alert: 'GpuattrDown',
            expr: 'up{%(selector)s} == 0' % $._config,
            'for': '2m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Prometheus cannot scrape gpuattr',
              description: 'gpuattr is not running or not listening on {{ $labels.instance }}; every gpuattr series is missing.',
              runbook: 'Start gpuattr again (systemctl --user start gpuattr, or scripts/run.sh) and check that --web.listen-address matches the scrape target in prometheus.yml.',
              runbook_url: '%(runbookURLBase)s#gpuattrdown' % $._config,
            },
          },
          {
            // The absent() variant of GpuattrDown: a ServiceMonitor that selects no Service (a label
            // the operator's selector wants, another namespace) or a scrape config with another job
            // name leaves no up{job="gpuattr"} at all, and then GpuattrDown cannot fire.
            alert: 'GpuattrTargetMissing',
            expr: 'absent(up{%(selector)s})' % $._config,
            'for': '10m',
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Prometheus scrapes no gpuattr target',
              description: 'Prometheus has had no target of job {{ $labels.job }} for 10 min: nothing scrapes gpuattr, so no other gpuattr alert can fire.',
              runbook: 'Under the Prometheus Operator, check that the ServiceMonitor carries the label your Prometheus selects ServiceMonitors by (kube-prometheus-stack: release: <helm release>) and that Prometheus may read the gpuattr namespace; Status -> Targets in Prometheus lists what it scrapes. With a scrape config, its job_name must be the job this rule watches.',
              runbook_url: '%(runbookURLBase)s#gpuattrtargetmissing' % $._config,
            },
          },
        ],
      },
    ],
  },
}
