// What a user of the mixin may change (docs/kube-prometheus-stack.md#2-the-mixin-with-your-own-values):
//   (import 'gpuattr-mixin/mixin.libsonnet') + { _config+:: { selector: 'job="gpu-team/gpuattr"' } }
{
  _config+:: {
    // Every series selector of every alert, recording rule and dashboard query carries it: the
    // scrape job of gpuattr (a ServiceMonitor's job is the Service's name: gpuattr).
    selector: 'job="gpuattr"',
    // runbook_url = <runbookURLBase>#<alert name in lower case>: the sections of docs/alerts.md.
    runbookURLBase: 'https://github.com/gpuattr/gpuattr/blob/main/docs/alerts.md',

    // Thresholds of the alerts (their texts follow them).
    podIdleVramGiB: 1,  // GpuattrPodIdleVram: memory held by an idle pod ...
    podIdleHours: 1,  // ... idle for this long by gpuattr's own count
    namespaceIdleVramGiB: 8,  // GpuattrNamespaceIdleVram: memory held by a namespace's idle pods
    staleIntervals: 3,  // GpuattrStale: cycles missed ...
    staleMinSeconds: 60,  // ... and at least this long
  },
}
