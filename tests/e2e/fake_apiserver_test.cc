// The fake apiserver over real TLS on 127.0.0.1: kubectl against it, discovery, pagination,
// watches (scripted, in-process, bookmarks, 410), faults (429, truncated, oversized), auth, the
// pod and service proxies, the request log, Stop() with open watches, and the
// gpuattr-fakecluster binary. Clients are plain httplib::SSLClient.
#include "support/fake_apiserver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <future>
#include <regex>
#include <set>
#include <thread>

#include <httplib.h>
#include <yaml-cpp/binary.h>
#include <yaml-cpp/yaml.h>

#include "support/paths.h"
#include "test_paths.h"

extern char** environ;

namespace gpuattr::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr const char* kToken = "gpuattr-test-token";

X509_STORE* StoreFromPem(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, cert);
  X509_free(cert);
  return store;
}

void Configure(httplib::SSLClient& c, const std::string& ca_pem, const std::string& token) {
  c.set_ca_cert_store(StoreFromPem(ca_pem));  // the client's SSL_CTX takes ownership
  c.enable_server_certificate_verification(true);
  if (!token.empty()) c.set_bearer_token_auth(token);
  c.set_connection_timeout(5);
  c.set_read_timeout(10);
}

std::unique_ptr<httplib::SSLClient> Client(const FakeApiServer& s,
                                           const std::string& token = kToken) {
  auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", s.port());
  Configure(*c, s.pki().ca.cert_pem, token);
  return c;
}

// A client authenticating with a client certificate (and no token).
std::unique_ptr<httplib::SSLClient> CertClient(const FakeApiServer& s, const CertAndKey& cert) {
  BIO* cb = BIO_new_mem_buf(cert.cert_pem.data(), static_cast<int>(cert.cert_pem.size()));
  X509* x = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
  BIO_free(cb);
  BIO* kb = BIO_new_mem_buf(cert.key_pem.data(), static_cast<int>(cert.key_pem.size()));
  EVP_PKEY* k = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
  BIO_free(kb);
  auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", s.port(), x, k);
  X509_free(x);
  EVP_PKEY_free(k);
  Configure(*c, s.pki().ca.cert_pem, "");
  return c;
}

Scenario Load(const std::string& name) {
  auto sc = LoadScenario(FixturePath("scenarios/" + name));
  if (!sc) throw std::runtime_error(sc.error().message);
  return std::move(*sc);
}

json Parse(const httplib::Result& r) { return json::parse(r->body, nullptr, false); }

std::vector<std::string> Names(const json& list) {
  std::vector<std::string> out;
  for (const auto& item : list["items"]) out.push_back(item["metadata"]["name"]);
  return out;
}

// Streams a watch and collects its events until `enough` says so, the stream ends, or 200 events.
struct WatchOutcome {
  httplib::Error error = httplib::Error::Success;
  int status = 0;
  std::vector<json> events;
};

WatchOutcome Watch(httplib::SSLClient& c, const std::string& path,
                   const std::function<bool(const std::vector<json>&)>& enough) {
  WatchOutcome out;
  std::string buf;
  auto res = c.Get(
      path, httplib::Headers{},
      [&](const httplib::Response& r) {
        out.status = r.status;
        return true;
      },
      [&](const char* data, size_t n) {
        buf.append(data, n);
        for (size_t nl; (nl = buf.find('\n')) != std::string::npos;) {
          out.events.push_back(json::parse(buf.substr(0, nl), nullptr, false));
          buf.erase(0, nl + 1);
          if (enough(out.events) || out.events.size() >= 200) return false;
        }
        return true;
      });
  out.error = res.error();
  if (res && out.status == 0) out.status = res->status;
  return out;
}

struct CommandResult {
  int rc = -1;
  std::string output;
};

CommandResult RunCommand(const std::string& cmd) {
  CommandResult r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int st = pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

fs::path MakeTempDir() {
  std::string tmpl = (fs::path(::testing::TempDir()) / "fakeapi-XXXXXX").string();
  return mkdtemp(tmpl.data());
}

class FakeApiServerTest : public ::testing::Test {
 protected:
  FakeApiServer& Start(Scenario sc, FakeApiServerOptions opts = {}) {
    server_ = std::make_unique<FakeApiServer>(std::move(sc), std::move(opts));
    auto st = server_->Start();
    EXPECT_TRUE(st.ok()) << st.message();
    return *server_;
  }
  void TearDown() override {
    if (server_) server_->Stop();
    if (!tmp_.empty()) {
      std::error_code ec;
      fs::remove_all(tmp_, ec);
    }
  }
  const fs::path& Tmp() {
    if (tmp_.empty()) tmp_ = MakeTempDir();
    return tmp_;
  }
  std::unique_ptr<FakeApiServer> server_;
  fs::path tmp_;
};

// ---------------------------------------------------------------------------------------------
// kubectl

TEST_F(FakeApiServerTest, KubectlListsPodsAndReadsThePodProxy) {
  if (access("/usr/bin/kubectl", X_OK) != 0)
    GTEST_SKIP() << "kubectl not installed at /usr/bin/kubectl";
  auto& s = Start(Load("basic"));
  fs::path kc = Tmp() / "kubeconfig";
  ASSERT_TRUE(s.WriteKubeconfig(kc).ok());
  std::string kubectl = "timeout 60 /usr/bin/kubectl --kubeconfig " + kc.string() +
                        " --cache-dir " + (Tmp() / "cache").string();

  auto pods = RunCommand(kubectl + " get pods -A");
  ASSERT_EQ(pods.rc, 0) << pods.output;
  for (const char* name :
       {"nvidia-dcgm-exporter-7xk2p", "llm-serve-0", "notebook-alice", "kube-apiserver-gpu-node-1",
        "etcd-gpu-node-1", "coredns-7db6d8ff4d-x7k2m"})
    EXPECT_THAT(pods.output, HasSubstr(name));

  auto raw = RunCommand(
      kubectl +
      " get --raw "
      "/api/v1/namespaces/gpu-operator/pods/nvidia-dcgm-exporter-q9d4m:9400/proxy/metrics");
  ASSERT_EQ(raw.rc, 0) << raw.output;
  EXPECT_EQ(raw.output,
            s.scenario().exporter_bodies.at("gpu-operator/nvidia-dcgm-exporter-q9d4m:9400")[0]);

  auto nodes = RunCommand(kubectl + " --context fake-cert get nodes");  // client-certificate user
  ASSERT_EQ(nodes.rc, 0) << nodes.output;
  EXPECT_THAT(nodes.output, HasSubstr("gpu-node-1"));
  EXPECT_THAT(nodes.output, HasSubstr("ml-worker-2"));

  auto missing = RunCommand(
      kubectl + " get --raw /api/v1/namespaces/gpu-operator/pods/nope:9400/proxy/metrics");
  EXPECT_NE(missing.rc, 0);
  EXPECT_THAT(missing.output, HasSubstr("pods \"nope\" not found"));

  auto wrong = RunCommand(kubectl + " --token wrong-token get pods -A");
  EXPECT_NE(wrong.rc, 0) << wrong.output;
  EXPECT_THAT(wrong.output, ::testing::AnyOf(HasSubstr("Unauthorized"), HasSubstr("logged in")));
  EXPECT_GE(s.CountRequests("list", "/api/v1/pods"), 1u);
}

// ---------------------------------------------------------------------------------------------
// The gpuattr-fakecluster binary.

TEST_F(FakeApiServerTest, FakeclusterBinaryServesScenarioUntilSigterm) {
  std::string binary = std::string(GPUATTR_BINARY_DIR) + "/tests/gpuattr-fakecluster";
  ASSERT_EQ(access(binary.c_str(), X_OK), 0) << binary;
  fs::path kc = Tmp() / "kc.yaml";
  std::string scenario = FixturePath("scenarios/basic").string();
  std::vector<std::string> args = {binary,        "--scenario",       scenario,    "--listen",
                                   "127.0.0.1:0", "--kubeconfig-out", kc.string(), "--token",
                                   "tok-123",     "--context",        "demo"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, binary.c_str(), &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);

  // First stdout line: the URL (bounded wait).
  std::string line;
  for (int i = 0; i < 200 && line.find('\n') == std::string::npos; ++i) {
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, 100) > 0) {
      char buf[256];
      ssize_t n = read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<size_t>(n));
    }
  }
  close(out[0]);
  std::smatch m;
  bool found = std::regex_search(line, m, std::regex("^https://127\\.0\\.0\\.1:([0-9]+)\n"));
  EXPECT_TRUE(found) << line;
  if (found) {
    // The kubeconfig names the contexts and carries the CA and the token.
    YAML::Node cfg = YAML::LoadFile(kc.string());
    EXPECT_EQ(cfg["current-context"].as<std::string>(), "demo");
    EXPECT_EQ(cfg["contexts"].size(), 2u);
    EXPECT_EQ(cfg["clusters"][0]["cluster"]["server"].as<std::string>() + "\n", line);
    auto ca = YAML::DecodeBase64(
        cfg["clusters"][0]["cluster"]["certificate-authority-data"].as<std::string>());
    std::string token = cfg["users"][0]["user"]["token"].as<std::string>();
    EXPECT_EQ(token, "tok-123");
    EXPECT_TRUE(cfg["users"][1]["user"]["client-certificate-data"].IsDefined());
    httplib::SSLClient c("127.0.0.1", std::stoi(m[1]));
    Configure(c, std::string(ca.begin(), ca.end()), token);
    auto r = c.Get("/api/v1/nodes");
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(Names(Parse(r)), (std::vector<std::string>{"gpu-node-1", "infra-1", "ml-worker-2"}));
    EXPECT_EQ((fs::status(kc).permissions() & fs::perms::group_read), fs::perms::none);
  }
  kill(pid, SIGTERM);
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 200 && done == 0; ++i) {  // up to 20 s
    done = waitpid(pid, &status, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (done == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL() << "gpuattr-fakecluster did not stop on SIGTERM";
  }
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(FakeApiServerTest, FakeclusterBinaryRejectsBadScenario) {
  std::string binary = std::string(GPUATTR_BINARY_DIR) + "/tests/gpuattr-fakecluster";
  auto r = RunCommand(binary + " --scenario " + (Tmp() / "nope").string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.output, HasSubstr("not found"));
  auto help = RunCommand(binary + " --help");
  EXPECT_EQ(help.rc, 0);
  EXPECT_THAT(help.output, HasSubstr("--kubeconfig-out"));
}

// ---------------------------------------------------------------------------------------------
// Discovery and objects.

TEST_F(FakeApiServerTest, DiscoveryEndpoints) {
  Scenario sc = Load("basic");
  sc.dra_versions = {"v1beta2", "v1beta1"};
  sc.objects.push_back(
      json::parse(R"({"apiVersion":"resource.k8s.io/v1beta1","kind":"ResourceSlice",
      "metadata":{"name":"gpu-node-1-gpu.nvidia.com"},"spec":{"driver":"gpu.nvidia.com","nodeName":"gpu-node-1"}})"));
  auto& s = Start(std::move(sc));
  auto c = Client(s);

  auto v = Parse(c->Get("/version"));
  EXPECT_EQ(v["minor"], "30");
  EXPECT_EQ(v["gitVersion"], "v1.30.4");
  EXPECT_EQ(Parse(c->Get("/api"))["versions"], json::array({"v1"}));

  auto apis = Parse(c->Get("/apis"));
  ASSERT_EQ(apis["groups"].size(), 1u);
  EXPECT_EQ(apis["groups"][0]["name"], "resource.k8s.io");
  EXPECT_EQ(apis["groups"][0]["preferredVersion"]["version"], "v1beta2");
  EXPECT_EQ(apis["groups"][0]["versions"].size(), 2u);

  auto core = Parse(c->Get("/api/v1"));
  std::set<std::string> names;
  for (const auto& r : core["resources"]) names.insert(r["name"]);
  EXPECT_EQ(names, (std::set<std::string>{"pods", "pods/proxy", "nodes", "services",
                                          "services/proxy", "namespaces"}));

  // v1 is not served here: 404, as on a cluster that only has the betas.
  auto v1 = c->Get("/apis/resource.k8s.io/v1/resourceslices");
  ASSERT_TRUE(v1);
  EXPECT_EQ(v1->status, 404);
  EXPECT_EQ(Parse(v1)["kind"], "Status");
  auto beta = c->Get("/apis/resource.k8s.io/v1beta1/resourceslices");
  ASSERT_TRUE(beta);
  ASSERT_EQ(beta->status, 200);
  auto slices = Parse(beta);
  EXPECT_EQ(slices["kind"], "ResourceSliceList");
  EXPECT_EQ(slices["apiVersion"], "resource.k8s.io/v1beta1");
  EXPECT_EQ(Names(slices), std::vector<std::string>{"gpu-node-1-gpu.nvidia.com"});
  auto one =
      Parse(c->Get("/apis/resource.k8s.io/v1beta2/resourceslices/gpu-node-1-gpu.nvidia.com"));
  EXPECT_EQ(one["apiVersion"], "resource.k8s.io/v1beta2");
  EXPECT_EQ(one["kind"], "ResourceSlice");
  EXPECT_EQ(c->Get("/apis/resource.k8s.io/v1beta1/resourceclaims")->status, 200);

  // Without a dra/ folder there is no resource.k8s.io group at all.
  FakeApiServer plain(Load("faults-and-watch"));
  ASSERT_TRUE(plain.Start().ok());
  auto pc = Client(plain);
  EXPECT_EQ(Parse(pc->Get("/apis"))["groups"].size(), 0u);
  EXPECT_EQ(pc->Get("/apis/resource.k8s.io/v1/resourceclaims")->status, 404);
}

TEST_F(FakeApiServerTest, DraScenarioServesV1Only) {
  auto& s = Start(Load("dra"));
  auto c = Client(s);
  EXPECT_EQ(Parse(c->Get("/version"))["minor"], "34");
  auto claims = c->Get("/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims");
  ASSERT_EQ(claims->status, 200);
  EXPECT_EQ(Names(Parse(claims)), (std::vector<std::string>{"eight-gpus", "llm-dra-0-gpu-7kq2x"}));
  auto all = Parse(c->Get("/apis/resource.k8s.io/v1/resourceclaims"));
  EXPECT_EQ(all["items"].size(), 3u);
  EXPECT_EQ(c->Get("/apis/resource.k8s.io/v1beta1/resourceslices")->status, 404);
  auto w = Watch(*c, "/apis/resource.k8s.io/v1/resourceslices?watch=1&timeoutSeconds=5",
                 [](const std::vector<json>& evs) { return !evs.empty(); });
  ASSERT_EQ(w.events.size(), 1u);
  EXPECT_EQ(w.events[0]["object"]["apiVersion"], "resource.k8s.io/v1");
  EXPECT_EQ(w.events[0]["object"]["kind"], "ResourceSlice");
}

TEST_F(FakeApiServerTest, ObjectsCarryApiserverMetadata) {
  auto& s = Start(Load("basic"));
  auto c = Client(s);
  auto list = Parse(c->Get("/api/v1/namespaces/ml/pods"));
  EXPECT_EQ(list["kind"], "PodList");
  EXPECT_EQ(list["apiVersion"], "v1");
  EXPECT_EQ(Names(list), (std::vector<std::string>{"llm-serve-0", "train-resnet-7c9f8-abcde"}));
  std::set<std::string> uids;
  for (const auto& p : list["items"]) {
    EXPECT_FALSE(p.contains("kind"));  // list items carry no type meta, as from the apiserver
    EXPECT_TRUE(p["metadata"]["resourceVersion"].is_string());
    EXPECT_TRUE(p["metadata"]["uid"].is_string());
    EXPECT_EQ(p["metadata"]["creationTimestamp"].get<std::string>().size(), 20u);
    uids.insert(p["metadata"]["uid"]);
  }
  EXPECT_EQ(uids.size(), 2u);
  EXPECT_EQ(list["metadata"]["resourceVersion"], std::to_string(s.resource_version()));

  auto pod = c->Get("/api/v1/namespaces/ml/pods/llm-serve-0");
  ASSERT_EQ(pod->status, 200);
  EXPECT_EQ(Parse(pod)["kind"], "Pod");
  EXPECT_EQ(Parse(pod)["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "2");
  auto node = Parse(c->Get("/api/v1/nodes/gpu-node-1"));
  EXPECT_EQ(node["status"]["allocatable"]["nvidia.com/gpu"], "4");
  auto missing = c->Get("/api/v1/namespaces/ml/pods/nope");
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(Parse(missing)["reason"], "NotFound");
  EXPECT_EQ(Parse(missing)["message"], "pods \"nope\" not found");

  auto on_node = Parse(c->Get("/api/v1/pods?fieldSelector=spec.nodeName%3Dml-worker-2"));
  EXPECT_EQ(Names(on_node),
            (std::vector<std::string>{"nvidia-dcgm-exporter-q9d4m", "notebook-alice"}));
  auto labelled = Parse(c->Get("/api/v1/pods?labelSelector=app%3Dnvidia-dcgm-exporter"));
  EXPECT_EQ(Names(labelled).size(), 2u);
  EXPECT_EQ(c->Get("/api/v1/pods?labelSelector=app+in+(x)")->status, 400);
}

TEST_F(FakeApiServerTest, PaginationReturnsEveryObjectOnce) {
  auto& s = Start(Load("basic"));
  auto c = Client(s);
  std::vector<std::string> seen;
  std::string cont, rv;
  int pages = 0;
  for (; pages < 10; ++pages) {
    auto r = c->Get("/api/v1/pods?limit=4" + (cont.empty() ? "" : "&continue=" + cont));
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    auto page = Parse(r);
    if (rv.empty()) rv = page["metadata"]["resourceVersion"];
    EXPECT_EQ(page["metadata"]["resourceVersion"], rv);  // every page of one list: one version
    EXPECT_LE(page["items"].size(), 4u);
    if (pages == 0) {
      EXPECT_EQ(page["metadata"]["remainingItemCount"], 7);
    }
    for (auto& n : Names(page)) seen.push_back(n);
    cont = page["metadata"].value("continue", "");
    if (cont.empty()) break;
  }
  EXPECT_EQ(pages + 1, 3);
  std::set<std::string> unique(seen.begin(), seen.end());
  EXPECT_EQ(seen.size(), 11u);
  EXPECT_EQ(unique.size(), 11u);
  EXPECT_EQ(s.CountRequests("list", "/api/v1/pods"), 3u);

  // Namespaced pagination stays in its namespace.
  auto first = Parse(c->Get("/api/v1/namespaces/kube-system/pods?limit=2"));
  ASSERT_TRUE(first["metadata"].contains("continue"));
  auto second = Parse(c->Get("/api/v1/namespaces/kube-system/pods?limit=2&continue=" +
                             first["metadata"]["continue"].get<std::string>()));
  EXPECT_EQ(Names(first).size() + Names(second).size(), 3u);
  EXPECT_FALSE(second["metadata"].contains("continue"));

  // A token from another list, or garbage: 400.
  EXPECT_EQ(
      c->Get("/api/v1/nodes?limit=2&continue=" + first["metadata"]["continue"].get<std::string>())
          ->status,
      400);
  EXPECT_EQ(c->Get("/api/v1/pods?limit=2&continue=zzzz")->status, 400);
  // After a change and a compaction the list's version is gone: 410 Expired.
  auto again = Parse(c->Get("/api/v1/pods?limit=2"));
  ASSERT_TRUE(
      s.Upsert(json::parse(R"({"kind":"Pod","metadata":{"name":"x","namespace":"ml"}})")).ok());
  s.Compact();
  auto expired =
      c->Get("/api/v1/pods?limit=2&continue=" + again["metadata"]["continue"].get<std::string>());
  EXPECT_EQ(expired->status, 410);
  EXPECT_EQ(Parse(expired)["reason"], "Expired");
}

// ---------------------------------------------------------------------------------------------
// Watch.

TEST_F(FakeApiServerTest, WatchDeliversScriptedEvents) {
  auto& s = Start(Load("faults-and-watch"));
  auto c = Client(s);
  auto list = Parse(c->Get("/api/v1/pods"));
  std::string rv = list["metadata"]["resourceVersion"];
  auto w = Watch(*c, "/api/v1/pods?watch=1&resourceVersion=" + rv + "&timeoutSeconds=30",
                 [](const std::vector<json>& evs) { return evs.back()["type"] == "DELETED"; });
  EXPECT_EQ(w.status, 200);
  ASSERT_EQ(w.events.size(), 3u);
  EXPECT_EQ(w.events[0]["type"], "ADDED");
  EXPECT_EQ(w.events[0]["object"]["kind"], "Pod");
  EXPECT_EQ(w.events[0]["object"]["apiVersion"], "v1");
  EXPECT_EQ(w.events[0]["object"]["metadata"]["name"], "late-job");
  EXPECT_EQ(w.events[1]["type"], "MODIFIED");
  EXPECT_EQ(w.events[1]["object"]["status"]["phase"], "Running");
  EXPECT_EQ(w.events[1]["object"]["metadata"]["uid"], w.events[0]["object"]["metadata"]["uid"]);
  EXPECT_EQ(w.events[2]["type"], "DELETED");
  EXPECT_EQ(w.events[2]["object"]["metadata"]["name"], "trainer");
  // resourceVersions increase along the stream.
  auto rv_of = [](const json& e) {
    return std::stoull(e["object"]["metadata"]["resourceVersion"].get<std::string>());
  };
  EXPECT_LT(std::stoull(rv), rv_of(w.events[0]));
  EXPECT_LT(rv_of(w.events[0]), rv_of(w.events[1]));
  EXPECT_LT(rv_of(w.events[1]), rv_of(w.events[2]));
  EXPECT_TRUE(s.ScriptErrors().empty());
  EXPECT_FALSE(s.Get("pods", "ml", "trainer").has_value());
  EXPECT_EQ(s.CountRequests("watch"), 1u);
}

TEST_F(FakeApiServerTest, WatchSeesInProcessMutationsAndBookmarks) {
  FakeApiServerOptions opts;
  opts.bookmark_interval = std::chrono::milliseconds(50);
  auto& s = Start(Load("basic"), opts);
  auto c = Client(s);
  // Mutate from another thread once the watch is open (seen in the request log).
  std::thread mutator([&] {
    for (int i = 0; i < 500 && s.CountRequests("watch") == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(
        s.Upsert(json::parse(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-node-3"},
        "status":{"allocatable":{"nvidia.com/gpu":"8"}}})"))
            .ok());
    EXPECT_TRUE(s.Patch("nodes", "", "gpu-node-3",
                        json::parse(R"({"status":{"allocatable":{"nvidia.com/gpu":"7"}}})"))
                    .ok());
    EXPECT_TRUE(s.Delete("nodes", "", "infra-1").ok());
    EXPECT_TRUE(s.Upsert(json::parse(R"({"kind":"Pod","metadata":{"name":"p","namespace":"ml"}})"))
                    .ok());  // other resource
  });
  // resourceVersion="" starts with the current state as ADDED events.
  auto w = Watch(*c, "/api/v1/nodes?watch=true&allowWatchBookmarks=true&timeoutSeconds=30",
                 [](const std::vector<json>& evs) {
                   bool deleted = false;
                   for (const auto& e : evs) deleted |= e["type"] == "DELETED";
                   return deleted && evs.back()["type"] == "BOOKMARK";
                 });
  mutator.join();
  std::vector<std::string> kinds;
  for (const auto& e : w.events)
    if (e["type"] != "BOOKMARK")
      kinds.push_back(e["type"].get<std::string>() + " " +
                      e["object"]["metadata"]["name"].get<std::string>());
  EXPECT_EQ(kinds, (std::vector<std::string>{"ADDED gpu-node-1", "ADDED infra-1",
                                             "ADDED ml-worker-2", "ADDED gpu-node-3",
                                             "MODIFIED gpu-node-3", "DELETED infra-1"}));
  const json& bookmark = w.events.back();
  EXPECT_EQ(bookmark["object"]["kind"], "Node");
  EXPECT_EQ(bookmark["object"]["metadata"]["resourceVersion"],
            std::to_string(s.resource_version()));
}

TEST_F(FakeApiServerTest, WatchEndsAfterTimeoutSeconds) {
  auto& s = Start(Load("basic"));
  auto c = Client(s);
  auto w = Watch(*c, "/api/v1/services?watch=1&timeoutSeconds=1",
                 [](const std::vector<json>&) { return false; });
  EXPECT_EQ(w.error, httplib::Error::Success);  // the server ended the stream cleanly
  EXPECT_EQ(w.status, 200);
  EXPECT_EQ(w.events.size(), 4u);  // the initial ADDED events
}

TEST_F(FakeApiServerTest, WatchTooOldResourceVersionGets410) {
  auto& s = Start(Load("basic"));
  auto c = Client(s);
  auto w = Watch(*c, "/api/v1/pods?watch=1&resourceVersion=1",
                 [](const std::vector<json>&) { return false; });
  EXPECT_EQ(w.status, 200);
  ASSERT_EQ(w.events.size(), 1u);
  EXPECT_EQ(w.events[0]["type"], "ERROR");
  EXPECT_EQ(w.events[0]["object"]["kind"], "Status");
  EXPECT_EQ(w.events[0]["object"]["code"], 410);
  EXPECT_EQ(w.events[0]["object"]["reason"], "Expired");

  // A fault rule forces it for an otherwise fresh watch, once.
  FaultRule gone;
  gone.verb = "watch";
  gone.status = 410;
  gone.times = 1;
  s.AddFault(gone);
  std::string rv = std::to_string(s.resource_version());
  auto forced = Watch(*c, "/api/v1/pods?watch=1&timeoutSeconds=5&resourceVersion=" + rv,
                      [](const std::vector<json>&) { return true; });
  ASSERT_EQ(forced.events.size(), 1u);
  EXPECT_EQ(forced.events[0]["object"]["code"], 410);
  auto ok = Watch(*c, "/api/v1/pods?watch=1&timeoutSeconds=1&resourceVersion=" + rv,
                  [](const std::vector<json>&) { return true; });
  EXPECT_EQ(ok.events.size(), 0u);  // no change since rv: the stream ends empty
  EXPECT_EQ(ok.error, httplib::Error::Success);
}

TEST_F(FakeApiServerTest, StopEndsOpenWatchesPromptly) {
  auto& s = Start(Load("basic"));
  auto c = Client(s);
  auto done = std::async(std::launch::async, [&] {
    return Watch(*c, "/api/v1/pods?watch=1&resourceVersion=" + std::to_string(s.resource_version()),
                 [](const std::vector<json>&) { return false; });
  });
  for (int i = 0; i < 500 && s.CountRequests("watch") == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(s.CountRequests("watch"), 1u);
  s.Stop();
  // Generous bound: a hang here (the watch waiting for its 30-minute default timeout) is the bug.
  ASSERT_EQ(done.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(done.get().events.size(), 0u);
}

TEST_F(FakeApiServerTest, AbandonedWatchesFreeTheirThreads) {
  FakeApiServerOptions opts;
  opts.threads = 2;  // a leaked watch would soon leave no thread for new requests
  auto& s = Start(Load("basic"), opts);
  for (int i = 0; i < 6; ++i) {
    auto c = Client(s);
    // No timeoutSeconds, no bookmarks: the client takes the first event and hangs up.
    auto w = Watch(*c, "/api/v1/pods?watch=1",
                   [](const std::vector<json>& evs) { return !evs.empty(); });
    ASSERT_EQ(w.events.size(), 1u) << "watch " << i << ": " << httplib::to_string(w.error);
  }
  auto r = Client(s)->Get("/api/v1/nodes");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
}

// ---------------------------------------------------------------------------------------------
// Faults.

TEST_F(FakeApiServerTest, ThrottledListGets429WithRetryAfter) {
  auto& s = Start(Load("faults-and-watch"));
  auto c = Client(s);
  auto r = c->Get("/api/v1/nodes");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  auto st = Parse(r);
  EXPECT_EQ(st["kind"], "Status");
  EXPECT_EQ(st["reason"], "TooManyRequests");
  EXPECT_EQ(st["details"]["retryAfterSeconds"], 1);
  auto again = c->Get("/api/v1/nodes");  // times: 1
  EXPECT_EQ(again->status, 200);
  auto log = s.Requests();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_TRUE(log[0].fault);
  EXPECT_EQ(log[0].status, 429);
  EXPECT_FALSE(log[1].fault);
}

TEST_F(FakeApiServerTest, TruncatedBodyClosesMidway) {
  auto& s = Start(Load("faults-and-watch"));
  auto c = Client(s);
  auto r = c->Get("/api/v1/namespaces/gpu-operator/pods/slow-exporter:9400/proxy/metrics");
  // Content-Length promises the whole body; the connection closes after 100 bytes.
  EXPECT_FALSE(r);
  EXPECT_EQ(r.error(), httplib::Error::Read);
  auto log = s.Requests();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].verb, "proxy");
  EXPECT_EQ(log[0].resource, "pods/proxy");
  EXPECT_EQ(log[0].detail, "truncated at 100");

  // The raw bytes that arrive are exactly the first 100 of the real body.
  std::string got;
  auto streamed = c->Get("/api/v1/namespaces/gpu-operator/pods/slow-exporter:9400/proxy/metrics",
                         [&](const char* d, size_t n) {
                           got.append(d, n);
                           return true;
                         });
  EXPECT_FALSE(streamed);
  EXPECT_EQ(got,
            s.scenario().exporter_bodies.at("gpu-operator/slow-exporter:9400")[0].substr(0, 100));
}

TEST_F(FakeApiServerTest, OversizedBodyStreamsValidLines) {
  auto& s = Start(Load("faults-and-watch"));
  auto c = Client(s);
  auto r = c->Get("/api/v1/namespaces/gpu-operator/pods/huge-exporter:9400/proxy/metrics");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body.size(), 2000000u);
  std::regex line("gpuattr_fake_padding\\{line=\"[0-9]+\"\\} 1");
  size_t start = 0, lines = 0;
  for (size_t nl; (nl = r->body.find('\n', start)) != std::string::npos; start = nl + 1, ++lines)
    ASSERT_TRUE(std::regex_match(r->body.substr(start, nl - start), line))
        << r->body.substr(start, nl - start);
  EXPECT_GT(lines, 1000u);
  EXPECT_EQ(s.Requests().at(0).detail, "oversize 2000000");
}

TEST_F(FakeApiServerTest, RuntimeFaultsApplyTheirCount) {
  auto& s = Start(Load("basic"));
  auto c = Client(s);
  FaultRule rule;
  rule.path_regex = "/proxy/metrics$";
  rule.status = 503;
  rule.times = 2;
  s.AddFault(rule);
  std::string path =
      "/api/v1/namespaces/gpu-operator/pods/nvidia-dcgm-exporter-q9d4m:9400/proxy/metrics";
  EXPECT_EQ(c->Get(path)->status, 503);
  EXPECT_EQ(c->Get(path)->status, 503);
  EXPECT_EQ(c->Get(path)->status, 200);
  FaultRule forbidden;
  forbidden.path_prefix = "/api/v1/namespaces/gpu-operator/pods/";
  forbidden.status = 403;
  s.AddFault(forbidden);
  auto r = c->Get(path);
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(Parse(r)["message"],
            "pods/proxy \"nvidia-dcgm-exporter-q9d4m:9400\" is forbidden: User \"gpuattr-test\" "
            "cannot get "
            "resource \"pods/proxy\" in API group \"\" in the namespace \"gpu-operator\"");
  s.ClearFaults();
  EXPECT_EQ(c->Get(path)->status, 200);
}

// ---------------------------------------------------------------------------------------------
// Auth and methods.

TEST_F(FakeApiServerTest, AuthenticationByTokenOrClientCertificate) {
  auto& s = Start(Load("basic"));
  auto anonymous = Client(s, "");
  auto r = anonymous->Get("/api/v1/pods");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(Parse(r)["kind"], "Status");
  EXPECT_EQ(Parse(r)["reason"], "Unauthorized");
  EXPECT_EQ(anonymous->Get("/version")->status, 200);  // public, as with anonymous auth on

  auto wrong = Client(s, "not-a-token");
  EXPECT_EQ(wrong->Get("/api/v1/pods")->status, 401);
  EXPECT_EQ(wrong->Get("/version")->status, 401);  // bad credentials are never anonymous

  auto cert = CertClient(s, s.pki().client);
  auto ok = cert->Get("/api/v1/nodes");
  ASSERT_TRUE(ok) << httplib::to_string(ok.error());
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(s.Requests().back().user, "gpuattr-test");  // the certificate's CN

  auto intruder = CertClient(s, MakeClientCert(s.pki().other_ca, "intruder"));
  auto denied = intruder->Get("/api/v1/nodes");
  ASSERT_TRUE(denied) << httplib::to_string(denied.error());
  EXPECT_EQ(denied->status, 401);

  auto good = Client(s);
  EXPECT_EQ(good->Get("/api/v1/pods")->status, 200);
  EXPECT_EQ(s.Requests().back().user, "gpuattr-test");
}

TEST_F(FakeApiServerTest, OnlyGetIsServed) {
  auto& s = Start(Load("basic"));
  auto c = Client(s);
  auto r = c->Post("/api/v1/namespaces/ml/pods", "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(Parse(r)["reason"], "MethodNotAllowed");
  auto d = Client(s)->Delete("/api/v1/namespaces/ml/pods/llm-serve-0");
  EXPECT_EQ(d->status, 405);
  EXPECT_TRUE(s.Get("pods", "ml", "llm-serve-0").has_value());
  EXPECT_EQ(s.CountRequests("other"), 2u);
}

// ---------------------------------------------------------------------------------------------
// Proxies.

TEST_F(FakeApiServerTest, PodProxyServesBodiesInTurn) {
  auto& s = Start(Load("faults-and-watch"));
  auto c = Client(s);
  std::string base = "/api/v1/namespaces/gpu-operator/pods/";
  std::vector<std::string> utils;
  for (int i = 0; i < 4; ++i) {
    auto r = c->Get(base + "dcgm-exporter-a:9400/proxy/metrics");
    ASSERT_EQ(r->status, 200);
    EXPECT_THAT(r->get_header_value("Content-Type"), HasSubstr("text/plain"));
    utils.push_back(r->body.substr(r->body.rfind(' ') + 1));
  }
  EXPECT_EQ(utils, (std::vector<std::string>{"10\n", "20\n", "30\n", "30\n"}));  // last one repeats
  EXPECT_EQ(c->Get(base + "dcgm-exporter-a:metrics/proxy/metrics")->status, 200);  // named port
  EXPECT_EQ(c->Get(base + "https:dcgm-exporter-a:9400/proxy/metrics")->status, 200);

  auto no_listener = c->Get("/api/v1/namespaces/ml/pods/trainer:9400/proxy/metrics");
  EXPECT_EQ(no_listener->status, 503);
  EXPECT_THAT(Parse(no_listener)["message"].get<std::string>(), HasSubstr("connection refused"));
  EXPECT_EQ(c->Get("/api/v1/namespaces/ml/pods/trainer/proxy/metrics")->status, 503);  // port 80
  auto no_pod = c->Get(base + "ghost:9400/proxy/metrics");
  EXPECT_EQ(no_pod->status, 404);
  EXPECT_EQ(Parse(no_pod)["message"], "pods \"ghost\" not found");
  EXPECT_EQ(c->Get(base + "dcgm-exporter-a:9400/proxy/other")->status, 404);

  s.SetExporterBodies("ml", "trainer", 9400, {"up 1\n"});
  EXPECT_EQ(c->Get("/api/v1/namespaces/ml/pods/trainer:9400/proxy/metrics")->body, "up 1\n");
  s.RemoveExporter("ml", "trainer", 9400);
  EXPECT_EQ(c->Get("/api/v1/namespaces/ml/pods/trainer:9400/proxy/metrics")->status, 503);
  EXPECT_EQ(s.CountRequests("proxy", base + "dcgm-exporter-a"), 6u);  // 4 + named port + other path
}

TEST_F(FakeApiServerTest, ServiceProxyAnswersPrometheusQueries) {
  auto& s = Start(Load("basic"));
  auto c = Client(s);
  std::string base = "/api/v1/namespaces/monitoring/services/prometheus-k8s:9090/proxy";
  auto r = c->Get(base + "/api/v1/query?query=" +
                  httplib::detail::encode_query_param("max by (gpu) (DCGM_FI_DEV_GPU_UTIL)"));
  ASSERT_EQ(r->status, 200);
  auto j = Parse(r);
  EXPECT_EQ(j["status"], "success");
  ASSERT_EQ(j["data"]["result"].size(), 6u);
  EXPECT_EQ(j["data"]["result"][0]["metric"]["exported_pod"], "llm-serve-0");
  EXPECT_EQ(j["data"]["result"][0]["value"][1], "78");
  // The port by name reaches the same answers.
  auto named =
      Parse(c->Get("/api/v1/namespaces/monitoring/services/prometheus-k8s:web/proxy/api/v1/"
                   "query?query=DCGM_FI_DEV_POWER_USAGE"));
  EXPECT_EQ(named["data"]["result"][4]["value"][1], "35.6");
  auto none = Parse(c->Get(base + "/api/v1/query?query=up"));
  EXPECT_EQ(none["data"]["result"].size(), 0u);
  EXPECT_EQ(c->Get(base + "/api/v1/query")->status, 400);
  EXPECT_EQ(Parse(c->Get(base + "/api/v1/status/buildinfo"))["status"], "success");
  EXPECT_EQ(c->Get("/api/v1/namespaces/monitoring/services/nope:9090/proxy/api/v1/query?query=up")
                ->status,
            404);
  EXPECT_EQ(
      c->Get("/api/v1/namespaces/kube-system/services/kube-dns:53/proxy/api/v1/query?query=up")
          ->status,
      503);
  EXPECT_EQ(s.CountRequests("proxy", "/api/v1/namespaces/monitoring/services/"), 6u);
}

TEST_F(FakeApiServerTest, RequestLogCountsAndResets) {
  auto& s = Start(Load("basic"));
  auto c = Client(s);
  c->Get("/api/v1/pods?limit=500");
  c->Get("/api/v1/nodes");
  c->Get("/api/v1/namespaces/gpu-operator/pods/nvidia-dcgm-exporter-7xk2p:9400/proxy/metrics");
  c->Get("/version");
  EXPECT_EQ(s.CountRequests("list"), 2u);
  EXPECT_EQ(s.CountRequests("proxy"), 1u);
  EXPECT_EQ(s.CountRequests("get"), 1u);
  EXPECT_EQ(s.CountRequests(""), 4u);
  auto log = s.Requests();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0].path, "/api/v1/pods");
  EXPECT_EQ(log[0].query, "limit=500");
  EXPECT_EQ(log[0].resource, "pods");
  EXPECT_EQ(log[0].status, 200);
  EXPECT_LE(log[0].time, log[3].time);
  EXPECT_EQ(s.CountRequests("list", "", log[1].time), 1u);
  EXPECT_EQ(s.CountRequests("", "", log[3].time + std::chrono::hours(1)), 0u);
  s.ResetRequests();
  EXPECT_EQ(s.CountRequests(""), 0u);
}

}  // namespace
}  // namespace gpuattr::testing
