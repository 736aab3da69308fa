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

}  // namespace

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
