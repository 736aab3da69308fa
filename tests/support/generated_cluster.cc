#include "support/generated_cluster.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuattr::testing {
namespace {

using nlohmann::json;

constexpr const char* kCreated = "2026-11-30T08:00:00Z";
constexpr const char* kModel = "NVIDIA A100-SXM4-80GB";
constexpr const char* kDriver = "550.127.05";
constexpr int kTeams = 40;

struct Slice {
  const char* profile;  // dcgm's GPU_I_PROFILE and the resource suffix
  int instance;         // GPU_I_ID
  int memory_mib;
};
constexpr std::array<Slice, 3> kSlices = {
    {{"3g.40gb", 1, 40192}, {"2g.20gb", 5, 19968}, {"2g.20gb", 6, 19968}}};
constexpr int kCardMemoryMib = 81920;

bool IsMigNode(int n) { return n % 2 == 1; }

// A small deterministic mixer: the same spec gives the same cluster.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::string Hex(uint64_t v, int digits) {
  static const char* kHex = "0123456789abcdef";
  std::string out(static_cast<size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, v >>= 4) out[static_cast<size_t>(i)] = kHex[v & 15];
  return out;
}

// A Kubernetes-style 5-character pod suffix.
std::string Suffix(uint64_t seed) {
  static const char* kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (int i = 0; i < 5; ++i, seed /= 27) out += kAlphabet[seed % 27];
  return out;
}

std::string Uuid(uint64_t seed) {
  uint64_t a = Mix(seed), b = Mix(a);
  return Hex(a >> 32, 8) + "-" + Hex((a >> 16) & 0xffff, 4) + "-" + Hex(a & 0xffff, 4) + "-" +
         Hex(b >> 48, 4) + "-" + Hex(b & 0xffffffffffffull, 12);
}

std::string CardUuid(int node, int gpu) {
  return "GPU-" + Uuid((static_cast<uint64_t>(node) << 8) | static_cast<uint64_t>(gpu));
}

std::string PodIp(int node, int index) {
  return "10." + std::to_string(64 + node / 250) + "." + std::to_string(node % 250) + "." +
         std::to_string(2 + index);
}

// One device of the cluster and the pod holding it.
struct Device {
  int node = 0;
  int gpu = 0;
  const Slice* slice = nullptr;  // null: a whole card
  std::string ns, pod, container;
  enum Kind { kJob, kInference, kNotebook } kind = kJob;
  int seed = 0;
};

json OwnerRef(const std::string& kind, const std::string& api_version, const std::string& name) {
  return {{"apiVersion", api_version},
          {"kind", kind},
          {"name", name},
          {"uid", Uuid(Mix(std::hash<std::string>{}(kind + name)))},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

json RunningStatus(const std::string& ip, const std::string& host_ip,
                   const std::vector<std::string>& containers, const std::string& image,
                   uint64_t seed) {
  json statuses = json::array();
  for (const std::string& c : containers)
    statuses.push_back(
        {{"name", c},
         {"ready", true},
         {"started", true},
         {"restartCount", 0},
         {"image", image},
         {"imageID", image + "@sha256:" + Hex(Mix(seed), 16) + Hex(Mix(seed + 1), 16) +
                         Hex(Mix(seed + 2), 16) + Hex(Mix(seed + 3), 16)},
         {"containerID", "containerd://" + Hex(Mix(seed + 4), 16) + Hex(Mix(seed + 5), 16) +
                             Hex(Mix(seed + 6), 16) + Hex(Mix(seed + 7), 16)},
         {"state", {{"running", {{"startedAt", kCreated}}}}}});
  json conditions = json::array();
  for (const char* t :
       {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"})
    conditions.push_back({{"type", t}, {"status", "True"}, {"lastTransitionTime", kCreated}});
  return {{"phase", "Running"},
          {"hostIP", host_ip},
          {"podIP", ip},
          {"podIPs", {{{"ip", ip}}}},
          {"qosClass", "Burstable"},
          {"startTime", kCreated},
          {"conditions", conditions},
          {"containerStatuses", statuses}};
}

json ServiceAccountVolume() {
  return {{"name", "kube-api-access"},
          {"projected",
           {{"defaultMode", 420},
            {"sources",
             {{{"serviceAccountToken", {{"expirationSeconds", 3607}, {"path", "token"}}}},
              {{"configMap",
                {{"name", "kube-root-ca.crt"},
                 {"items", {{{"key", "ca.crt"}, {"path", "ca.crt"}}}}}}}}}}}};
}

json VolumeMount() {
  return {{"name", "kube-api-access"},
          {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"},
          {"readOnly", true}};
}

json DevicePodJson(const Device& d, int index_on_node) {
  const std::string node = GeneratedNodeName(d.node);
  const std::string resource =
      d.slice ? std::string("nvidia.com/mig-") + d.slice->profile : "nvidia.com/gpu";
  std::string image, app;
  json ports = json::array();
  json owner;
  json labels;
  switch (d.kind) {
    case Device::kJob:
      image = d.seed % 2 ? "nvcr.io/nvidia/pytorch:24.05-py3" : "registry.example/ml/trainer:2.3.1";
      labels = {{"app.kubernetes.io/name", "trainer"},
                {"batch.kubernetes.io/job-name", d.pod.substr(0, d.pod.size() - 6)},
                {"batch.kubernetes.io/controller-uid", Uuid(static_cast<uint64_t>(d.seed))},
                {"team", d.ns}};
      owner = OwnerRef("Job", "batch/v1", d.pod.substr(0, d.pod.size() - 6));
      break;
    case Device::kInference:
      image = "vllm/vllm-openai:v0.6.3";
      ports.push_back(
          {{"name", "http"}, {"containerPort", kGeneratedInferencePort}, {"protocol", "TCP"}});
      labels = {{"app.kubernetes.io/name", "llm-server"}, {"pod-template-hash", "7d9f8c6b5"}};
      owner = OwnerRef("ReplicaSet", "apps/v1", d.pod.substr(0, d.pod.size() - 6));
      break;
    case Device::kNotebook:
      // No keyword in the image (a "cuda" tag would make it an exporter candidate too).
      image = "quay.io/jupyter/pytorch-notebook:2024-06-17";
      ports.push_back({{"name", "notebook"}, {"containerPort", 8888}, {"protocol", "TCP"}});
      labels = {{"app.kubernetes.io/name", "notebook"},
                {"statefulset.kubernetes.io/pod-name", d.pod}};
      owner = OwnerRef("StatefulSet", "apps/v1", d.pod.substr(0, d.pod.size() - 2));
      break;
  }
  json container = {
      {"name", d.container},
      {"image", image},
      {"imagePullPolicy", "IfNotPresent"},
      {"command", {"/bin/sh", "-c"}},
      {"args",
       {"exec python -m " + d.container + " --config /etc/" + d.container + "/config.yaml"}},
      {"env",
       {{{"name", "NCCL_DEBUG"}, {"value", "WARN"}},
        {{"name", "HF_HOME"}, {"value", "/cache/huggingface"}},
        {{"name", "POD_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}}}},
      {"resources",
       {{"limits", {{"cpu", "8"}, {"memory", "64Gi"}, {resource, "1"}}},
        {"requests", {{"cpu", "4"}, {"memory", "32Gi"}, {resource, "1"}}}}},
      {"volumeMounts", {VolumeMount()}},
      {"terminationMessagePath", "/dev/termination-log"},
      {"terminationMessagePolicy", "File"}};
  if (!ports.empty()) container["ports"] = ports;
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", d.pod},
                {"namespace", d.ns},
                {"uid", Uuid(Mix(static_cast<uint64_t>(d.seed) + 1000003))},
                {"creationTimestamp", kCreated},
                {"labels", labels},
                {"annotations", {{"kubectl.kubernetes.io/default-container", d.container}}},
                {"ownerReferences", {owner}}}},
              {"spec",
               {{"nodeName", node},
                {"restartPolicy", d.kind == Device::kJob ? "Never" : "Always"},
                {"schedulerName", "default-scheduler"},
                {"serviceAccountName", "default"},
                {"terminationGracePeriodSeconds", 30},
                {"tolerations",
                 {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}}},
                {"containers", {container}},
                {"volumes", {ServiceAccountVolume()}}}},
              {"status", RunningStatus(PodIp(d.node, 3 + index_on_node), "192.168.0.1",
                                       {d.container}, image, static_cast<uint64_t>(d.seed))}};
  return pod;
}

json DaemonPodJson(int node, const std::string& name, const std::string& app,
                   const std::string& image, const json& ports) {
  json container = {
      {"name", app},
      {"image", image},
      {"imagePullPolicy", "IfNotPresent"},
      {"env",
       {{{"name", "NODE_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}}}},
      {"securityContext", {{"privileged", true}}},
      {"volumeMounts", {VolumeMount()}}};
  if (!ports.empty()) container["ports"] = ports;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", kGeneratedExporterNamespace},
            {"uid", Uuid(Mix(std::hash<std::string>{}(name)))},
            {"creationTimestamp", kCreated},
            {"labels",
             {{"app", app},
              {"controller-revision-hash", "5c7b9d8f6"},
              {"pod-template-generation", "1"}}},
            {"ownerReferences", {OwnerRef("DaemonSet", "apps/v1", app)}}}},
          {"spec",
           {{"nodeName", GeneratedNodeName(node)},
            {"restartPolicy", "Always"},
            {"serviceAccountName", app},
            {"priorityClassName", "system-node-critical"},
            {"tolerations",
             {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}}},
            {"containers", {container}},
            {"volumes", {ServiceAccountVolume()}}}},
          {"status", RunningStatus(PodIp(node, app == "nvidia-dcgm-exporter" ? 0 : 1),
                                   "192.168.0.1", {app}, image, std::hash<std::string>{}(name))}};
}

json NodeJson(int n, int gpus) {
  const bool mig = IsMigNode(n);
  json capacity = {{"cpu", "128"},
                   {"memory", "2113407000Ki"},
                   {"pods", "110"},
                   {"ephemeral-storage", "3750000000Ki"}};
  if (mig) {
    capacity["nvidia.com/mig-3g.40gb"] = std::to_string(gpus);
    capacity["nvidia.com/mig-2g.20gb"] = std::to_string(2 * gpus);
  } else {
    capacity["nvidia.com/gpu"] = std::to_string(gpus);
  }
  json conditions = json::array();
  for (const char* t : {"MemoryPressure", "DiskPressure", "PIDPressure"})
    conditions.push_back({{"type", t}, {"status", "False"}, {"lastHeartbeatTime", kCreated}});
  conditions.push_back({{"type", "Ready"}, {"status", "True"}, {"lastHeartbeatTime", kCreated}});
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", GeneratedNodeName(n)},
            {"creationTimestamp", kCreated},
            {"labels",
             {{"kubernetes.io/hostname", GeneratedNodeName(n)},
              {"kubernetes.io/os", "linux"},
              {"node.kubernetes.io/instance-type", "p4de.24xlarge"},
              {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
              {"nvidia.com/gpu.count", std::to_string(gpus)},
              {"nvidia.com/gpu.memory", std::to_string(kCardMemoryMib)},
              {"nvidia.com/mig.capable", "true"},
              {"nvidia.com/mig.strategy", mig ? "mixed" : "single"},
              {"nvidia.com/mig.config", mig ? "custom-3g-2g-2g" : "all-disabled"}}}}},
          {"spec", {{"podCIDR", "10.64." + std::to_string(n % 250) + ".0/24"}}},
          {"status",
           {{"capacity", capacity},
            {"allocatable", capacity},
            {"conditions", conditions},
            {"nodeInfo",
             {{"kubeletVersion", "v1.30.4"},
              {"containerRuntimeVersion", "containerd://1.7.20"},
              {"osImage", "Ubuntu 22.04.4 LTS"},
              {"architecture", "amd64"}}}}}};
}

// One dcgm family: HELP, TYPE, one line per device.
struct Field {
  const char* name;
  const char* help;
  bool whole_cards_only;  // GPU_UTIL and friends: not reported on MIG slices
};
constexpr std::array<Field, 15> kFields = {{
    {"DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", false},
    {"DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).", false},
    {"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", false},
    {"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", false},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since boot (in mJ).", false},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "Total number of PCIe retries.", false},
    {"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", true},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", true},
    {"DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", false},
    {"DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", false},
    {"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", false},
    {"DCGM_FI_DEV_FB_RESERVED", "Framebuffer memory reserved (in MiB).", false},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.", false},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "Ratio of cycles the tensor (HMMA) pipe is active.", false},
    {"DCGM_FI_PROF_DRAM_ACTIVE", "Ratio of cycles the device memory interface is active.", false},
}};

std::string Value(size_t field, const Device& d) {
  const uint64_t r = Mix(static_cast<uint64_t>(d.seed) * 31 + field);
  const int card_seed = d.node * 8 + d.gpu;
  const int mem = d.slice ? d.slice->memory_mib : kCardMemoryMib;
  const int used = static_cast<int>(r % static_cast<uint64_t>(mem - 600));
  char buf[48];
  switch (field) {
    case 0:
      return std::to_string(210 + static_cast<int>(r % 1200));
    case 1:
      return "1593";
    case 2:
      return std::to_string(31 + card_seed % 45);
    case 3:  // the card's power, repeated on each of its slices
      std::snprintf(buf, sizeof buf, "%.3f",
                    61.0 + (Mix(static_cast<uint64_t>(card_seed)) % 33000) / 100.0);
      return buf;
    case 4:
      return std::to_string(1000000000ull + Mix(static_cast<uint64_t>(card_seed)) % 9000000000ull);
    case 5:
    case 8:
      return "0";
    case 6:
      return std::to_string(r % 101);
    case 7:
      return std::to_string(r % 60);
    case 9:
      return std::to_string(mem - 500 - used);
    case 10:
      return std::to_string(used);
    case 11:
      return "500";
    default:
      std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(r % 1000000) / 1e6);
      return buf;
  }
}

std::string DcgmBody(const std::vector<Device>& devices) {
  std::vector<std::string> labels;
  labels.reserve(devices.size());
  for (const Device& d : devices) {
    std::string l =
        "gpu=\"" + std::to_string(d.gpu) + "\",UUID=\"" + CardUuid(d.node, d.gpu) +
        "\",pci_bus_id=\"00000000:" + Hex(static_cast<uint64_t>(0x07 + d.gpu * 0x10), 2) +
        ":00.0\",device=\"nvidia" + std::to_string(d.gpu) + "\",modelName=\"" + kModel + "\",";
    if (d.slice)
      l += std::string("GPU_I_PROFILE=\"") + d.slice->profile + "\",GPU_I_ID=\"" +
           std::to_string(d.slice->instance) + "\",";
    l += "Hostname=\"" + GeneratedNodeName(d.node) + "\",DCGM_FI_DRIVER_VERSION=\"" + kDriver +
         "\",container=\"" + d.container + "\",namespace=\"" + d.ns + "\",pod=\"" + d.pod + "\"";
    labels.push_back(std::move(l));
  }
  std::string body;
  body.reserve(devices.size() * 15 * 330);
  for (size_t f = 0; f < kFields.size(); ++f) {
    const Field& field = kFields[f];
    const char* type = f == 4 || f == 5 ? "counter" : "gauge";
    body += std::string("# HELP ") + field.name + " " + field.help + "\n# TYPE " + field.name +
            " " + type + "\n";
    for (size_t i = 0; i < devices.size(); ++i) {
      if (field.whole_cards_only && devices[i].slice) continue;
      body += field.name;
      body += '{';
      body += labels[i];
      body += "} ";
      body += Value(f, devices[i]);
      body += '\n';
    }
  }
  return body;
}

std::string VllmBody(const Device& d) {
  const std::string l = "{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"}";
  const uint64_t r = Mix(static_cast<uint64_t>(d.seed));
  std::string b;
  auto family = [&](const char* name, const char* type, const char* help, const std::string& v) {
    b += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
         name + l + " " + v + "\n";
  };
  family("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.",
         std::to_string(r % 17));
  family("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
         std::to_string(r % 3));
  family("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.",
         "0." + std::to_string(r % 100));
  family("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.",
         std::to_string(1000000 + r % 100000));
  family("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.",
         std::to_string(400000 + r % 100000));
  family("vllm:num_preemptions_total", "counter", "Cumulative number of preemption.", "0");
  return b;
}

}  // namespace

std::string GeneratedNodeName(int node) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "gpu-node-%04d", node);
  return buf;
}

std::string GeneratedExporterPodName(int node) {
  return "nvidia-dcgm-exporter-" + Suffix(Mix(static_cast<uint64_t>(node) + 77));
}

Scenario GenerateCluster(const GeneratedClusterSpec& spec, GeneratedClusterInfo* info) {
  Scenario s;
  s.name = spec.name;
  GeneratedClusterInfo counts;
  const int nodes = std::max(0, spec.nodes);
  const int gpus = std::max(1, spec.gpus_per_node);

  // Which device pods become inference servers and notebooks: spread over the nodes.
  std::vector<Device::Kind> special(static_cast<size_t>(nodes), Device::kJob);
  int want_inf = std::min(spec.inference_pods, nodes);
  int want_nb = std::min(spec.notebook_pods, nodes - want_inf);
  for (int i = 0; i < want_inf; ++i)
    special[static_cast<size_t>(static_cast<long>(i) * nodes / std::max(1, want_inf))] =
        Device::kInference;
  for (int i = 0, n = 0; i < want_nb && n < nodes; ++n) {
    size_t at = static_cast<size_t>((n * 7 + 3) % nodes);
    while (special[at] != Device::kJob) at = (at + 1) % static_cast<size_t>(nodes);
    special[at] = Device::kNotebook;
    ++i;
  }

  int seed = 0, inference_index = 0, notebook_index = 0;
  for (int n = 0; n < nodes; ++n) {
    s.objects.push_back(NodeJson(n, gpus));
    std::vector<Device> devices;
    for (int g = 0; g < gpus; ++g) {
      const size_t slices = IsMigNode(n) ? kSlices.size() : 1;
      for (size_t k = 0; k < slices; ++k) {
        Device d;
        d.node = n;
        d.gpu = g;
        d.slice = IsMigNode(n) ? &kSlices[k] : nullptr;
        d.seed = seed++;
        d.kind = devices.empty() ? special[static_cast<size_t>(n)] : Device::kJob;
        const std::string sfx = Suffix(Mix(static_cast<uint64_t>(d.seed)));
        switch (d.kind) {
          case Device::kJob:
            d.ns = "team-" + std::to_string(d.seed % kTeams);
            d.pod = "train-" + std::to_string(d.seed) + "-" + sfx;
            d.container = "trainer";
            break;
          case Device::kInference:
            d.ns = kGeneratedInferenceNamespace;
            d.pod = "llm-" + std::to_string(inference_index++) + "-7d9f8c6b5-" + sfx;
            d.container = "vllm";
            break;
          case Device::kNotebook:
            d.ns = "team-" + std::to_string(d.seed % kTeams);
            d.pod = "notebook-" + std::to_string(notebook_index++) + "-0";
            d.container = "notebook";
            break;
        }
        devices.push_back(std::move(d));
      }
    }
    for (size_t i = 0; i < devices.size(); ++i) {
      const Device& d = devices[i];
      s.objects.push_back(DevicePodJson(d, static_cast<int>(i)));
      if (d.kind == Device::kJob) ++counts.portless_pods;
      if (d.kind == Device::kInference) {
        std::string body = VllmBody(d);
        counts.body_bytes += body.size();
        s.exporter_bodies[ExporterKey(d.ns, d.pod, std::to_string(kGeneratedInferencePort))] = {
            std::move(body)};
      }
    }
    counts.devices += devices.size();
    counts.gpu_pods += devices.size();

    const std::string exporter = GeneratedExporterPodName(n);
    s.objects.push_back(DaemonPodJson(n, exporter, "nvidia-dcgm-exporter",
                                      "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8-3.6.0-ubuntu22.04",
                                      json::array({{{"name", "metrics"},
                                                    {"containerPort", kGeneratedExporterPort},
                                                    {"protocol", "TCP"}}})));
    std::string body = DcgmBody(devices);
    counts.body_bytes += body.size();
    s.exporter_bodies[ExporterKey(kGeneratedExporterNamespace, exporter,
                                  std::to_string(kGeneratedExporterPort))] = {std::move(body)};
    ++counts.exporters;
    s.objects.push_back(DaemonPodJson(
        n, "nvidia-device-plugin-daemonset-" + Suffix(Mix(static_cast<uint64_t>(n) + 991)),
        "nvidia-device-plugin-daemonset", "nvcr.io/nvidia/k8s-device-plugin:v0.16.2",
        json::array()));
    ++counts.portless_pods;
  }
  counts.nodes = static_cast<size_t>(nodes);
  if (info) *info = counts;
  return s;
}

}  // namespace gpuattr::testing
