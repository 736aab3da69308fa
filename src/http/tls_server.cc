#include "gpuattr/http/tls_server.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

namespace gpuattr::http {
namespace {

// OpenSSL's error queue as one line (and emptied, so the next failure starts clean).
std::string OpenSslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out += (out.empty() ? "" : "; ") + std::string(buf);
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

Error Unusable(const std::string& what) {
  return MakeError(ErrorCode::kInvalidArgument, what + ": " + OpenSslErrors());
}

// RequestClientCert and RequireAnyClientCert take any certificate: the handshake must not fail
// on the verification OpenSSL still runs.
int AcceptAny(int, X509_STORE_CTX*) { return 1; }

// Go's TLS 1.2 suites (crypto/tls CipherSuites and InsecureCipherSuites that OpenSSL has), by
// the names exporter-toolkit reads. The insecure ones (RSA key exchange, CBC) are taken when a
// user lists them, as Go takes them; they are never a default.
struct Suite {
  std::string_view go, openssl;
};
constexpr Suite kSuites[] = {
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"},  // Go's alias
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},      // Go's alias
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
};

// A ':'-separated list for OpenSSL.
std::string Joined(const std::vector<std::string>& names, const char* fallback) {
  if (names.empty()) return fallback;
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ":") + n;
  return out;
}

}  // namespace

Result<std::string> CipherSuiteName(std::string_view go_name) {
  for (const Suite& s : kSuites)
    if (s.go == go_name) return std::string(s.openssl);
  if (go_name.starts_with("TLS_AES_") || go_name.starts_with("TLS_CHACHA20_"))
    return MakeError(ErrorCode::kInvalidArgument,
                     "\"" + std::string(go_name) +
                         "\" is a TLS 1.3 suite: those are not configurable (as in Go)");
  std::string known;
  for (const Suite& s : kSuites) known += (known.empty() ? "" : ", ") + std::string(s.go);
  return MakeError(ErrorCode::kInvalidArgument,
                   "unknown cipher suite \"" + std::string(go_name) + "\" (one of " + known + ")");
}

Result<std::string> CurveName(std::string_view go_name) {
  if (go_name == "CurveP256") return std::string("P-256");
  if (go_name == "CurveP384") return std::string("P-384");
  if (go_name == "CurveP521") return std::string("P-521");
  if (go_name == "X25519") return std::string("X25519");
  return MakeError(ErrorCode::kInvalidArgument, "unknown curve \"" + std::string(go_name) +
                                                    "\" (CurveP256, CurveP384, CurveP521, X25519)");
}

void SslCtxFree::operator()(ssl_ctx_st* ctx) const { SSL_CTX_free(ctx); }

Result<SslCtxPtr> MakeServerTlsContext(const TlsOptions& o) {
  ERR_clear_error();
  SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) return Unusable("cannot create a TLS context");
  SSL_CTX* c = ctx.get();
  if (SSL_CTX_set_min_proto_version(c, o.min_version) != 1 ||
      (o.max_version && SSL_CTX_set_max_proto_version(c, o.max_version) != 1))
    return Unusable("tls_server_config: min_version/max_version");
  SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_set_cipher_list(c, Joined(o.cipher_suites, kDefaultCipherSuites).c_str()) != 1)
    return Unusable("tls_server_config: cipher_suites");
  if (SSL_CTX_set1_groups_list(c, Joined(o.curves, kDefaultCurves).c_str()) != 1)
    return Unusable("tls_server_config: curve_preferences");
  SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                          SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_sess_set_cache_size(c, 1024);
  // Resumed sessions of verified clients need a context id (OpenSSL refuses them without one).
  static constexpr unsigned char kSessionContext[] = "gpuattr";
  SSL_CTX_set_session_id_context(c, kSessionContext, sizeof kSessionContext - 1);
  // Both files in every message: which of the two is wrong is not always clear to OpenSSL.
  const std::string pair = "tls_server_config: cannot use cert_file \"" + o.cert_file +
                           "\" with key_file \"" + o.key_file + "\"";
  if (SSL_CTX_use_certificate_chain_file(c, o.cert_file.c_str()) != 1)
    return Unusable(pair + " (the certificate is unreadable or not PEM)");
  if (SSL_CTX_use_PrivateKey_file(c, o.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
    return Unusable(pair + " (the key is unreadable, not PEM, or not the certificate's)");
  if (SSL_CTX_check_private_key(c) != 1)
    return Unusable(pair + " (the key does not belong to the certificate)");
  const bool verify = o.client_auth == ClientAuth::kVerifyClientCertIfGiven ||
                      o.client_auth == ClientAuth::kRequireAndVerifyClientCert;
  if (!o.client_ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(c, o.client_ca_file.c_str(), nullptr) != 1)
      return Unusable("tls_server_config: cannot use client_ca_file \"" + o.client_ca_file + "\"");
    // The CA names the server sends, so that clients pick a matching certificate.
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(o.client_ca_file.c_str()))
      SSL_CTX_set_client_CA_list(c, names);
  } else if (verify) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "tls_server_config: client_auth_type verifies client certificates: set "
                     "client_ca_file");
  }
  switch (o.client_auth) {
    case ClientAuth::kNoClientCert:
      SSL_CTX_set_verify(c, SSL_VERIFY_NONE, nullptr);
      break;
    case ClientAuth::kRequestClientCert:
      SSL_CTX_set_verify(c, SSL_VERIFY_PEER, AcceptAny);
      break;
    case ClientAuth::kRequireAnyClientCert:
      SSL_CTX_set_verify(c, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, AcceptAny);
      break;
    case ClientAuth::kVerifyClientCertIfGiven:
      SSL_CTX_set_verify(c, SSL_VERIFY_PEER, nullptr);
      break;
    case ClientAuth::kRequireAndVerifyClientCert:
      SSL_CTX_set_verify(c, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  return ctx;
}

}  // namespace gpuattr::http
