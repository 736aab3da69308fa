// The server side of TLS (OpenSSL), as the exporter-toolkit web config file's
// `tls_server_config` describes it: certificate and key, optional client certificates.
#pragma once

#include <memory>
#include <string>

#include "gpuattr/util/status.h"

struct ssl_ctx_st;  // OpenSSL's SSL_CTX

namespace gpuattr::http {

// Go's tls.ClientAuthType, by the names the web config file uses.
enum class ClientAuth {
  kNoClientCert,
  kRequestClientCert,           // asked for, not required, not verified
  kRequireAnyClientCert,        // required, not verified
  kVerifyClientCertIfGiven,     // verified against client_ca_file when sent
  kRequireAndVerifyClientCert,  // required and verified
};

struct TlsOptions {
  std::string cert_file;  // PEM: the certificate, then its chain
  std::string key_file;   // PEM
  std::string client_ca_file;
  ClientAuth client_auth = ClientAuth::kNoClientCert;
  int min_version = 0x0303;  // TLS 1.2 (as TLS1_2_VERSION), the exporter-toolkit default
  int max_version = 0;       // 0: the newest OpenSSL offers
  bool operator==(const TlsOptions&) const = default;
};

struct SslCtxFree {
  void operator()(ssl_ctx_st* ctx) const;
};
using SslCtxPtr = std::unique_ptr<ssl_ctx_st, SslCtxFree>;

// A server context for non-blocking connections (partial writes, no renegotiation). Errors name
// the file that cannot be used and OpenSSL's reason.
Result<SslCtxPtr> MakeServerTlsContext(const TlsOptions& options);

}  // namespace gpuattr::http
