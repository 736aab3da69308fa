// The server side of TLS (OpenSSL), as the exporter-toolkit web config file's
// `tls_server_config` describes it: certificate and key, optional client certificates.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

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
  // TLS 1.2 suites and key-exchange groups, OpenSSL's names (from the web config's Go names by
  // CipherSuiteName and CurveName); empty: the secure defaults below.
  std::vector<std::string> cipher_suites;
  std::vector<std::string> curves;
  bool operator==(const TlsOptions&) const = default;
};

// exporter-toolkit's defaults, as Go's: ECDHE key exchange with AEAD ciphers only (no RSA key
// exchange, no CBC); TLS 1.3's suites are OpenSSL's and not configurable, as in Go.
inline constexpr char kDefaultCipherSuites[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
inline constexpr char kDefaultCurves[] = "X25519:P-256:P-384:P-521";

// OpenSSL's name of a TLS 1.2 cipher suite given by its Go (IANA) name, as
// `tls_server_config.cipher_suites` lists them ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"); an
// error names the value and the accepted ones.
Result<std::string> CipherSuiteName(std::string_view go_name);
// OpenSSL's name of a group given by its Go name in `curve_preferences` (CurveP256, CurveP384,
// CurveP521, X25519).
Result<std::string> CurveName(std::string_view go_name);

struct SslCtxFree {
  void operator()(ssl_ctx_st* ctx) const;
};
using SslCtxPtr = std::unique_ptr<ssl_ctx_st, SslCtxFree>;

// A server context for non-blocking connections (partial writes, no renegotiation). Errors name
// the file that cannot be used and OpenSSL's reason.
Result<SslCtxPtr> MakeServerTlsContext(const TlsOptions& options);

}  // namespace gpuattr::http
