// The daemon's Fetcher: GETs through the cluster's kube::ApiClient (counted in
// gpuattr_apiserver_requests_total, errors naming the permission at fault).
#include "gpuattr/kube/api_client.h"
#include "gpuattr/scrape/fetch.h"

namespace gpuattr::scrape {
namespace {

class ApiFetcher final : public Fetcher {
 public:
  explicit ApiFetcher(std::shared_ptr<kube::ApiClient> client) : client_(std::move(client)) {}

  Fetch Get(const FetchTarget& target, const FetchOptions& options) override {
    Fetch f;
    kube::GetOptions get;
    get.timeout = options.timeout;
    get.max_body_bytes = options.max_body_bytes;
    get.max_attempts = 1;
    get.headers["Accept"] = options.accept;
    // Durations are real time whatever clock drives the cycle: they measure the exporter.
    const auto start = std::chrono::steady_clock::now();
    Result<kube::Response> r = client_->Get(target.proxy_path, get);
    f.duration_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!r.ok()) {
      f.error = r.error().message;
      f.http_status = HttpStatusOfError(r.error());
      // Resource exhaustion without an HTTP status (a 429 has one) is the transport's body cap.
      f.over_cap = r.error().code == ErrorCode::kResourceExhausted && f.http_status == 0;
      return f;
    }
    f.ok = true;
    f.http_status = r->status;
    f.body = std::move(r->body);
    f.bytes = f.body.size();
    return f;
  }

 private:
  std::shared_ptr<kube::ApiClient> client_;
};

}  // namespace

std::unique_ptr<Fetcher> MakeApiFetcher(std::shared_ptr<kube::ApiClient> client) {
  return std::make_unique<ApiFetcher>(std::move(client));
}

}  // namespace gpuattr::scrape
