#include "gpuattr/kube/tls.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

namespace gpuattr::kube {
namespace {

struct BioDeleter {
  void operator()(BIO* p) const { BIO_free(p); }
};

std::unique_ptr<BIO, BioDeleter> MemBio(const std::string& data) {
  return std::unique_ptr<BIO, BioDeleter>(
      BIO_new_mem_buf(data.data(), static_cast<int>(data.size())));
}

std::vector<X509Ptr> ReadCerts(const std::string& pem) {
  std::vector<X509Ptr> out;
  auto bio = MemBio(pem);
  if (!bio) return out;
  while (X509* c = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) out.emplace_back(c);
  ERR_clear_error();  // the loop ends with a "no start line" error
  return out;
}

int VerifyCallback(int preverify_ok, X509_STORE_CTX* store_ctx) {
  if (preverify_ok) return 1;
  SSL* ssl = static_cast<SSL*>(
      X509_STORE_CTX_get_ex_data(store_ctx, SSL_get_ex_data_X509_STORE_CTX_idx()));
  if (ssl) {
    auto* outcome = static_cast<VerifyOutcome*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
    if (outcome && outcome->error == 0) {
      outcome->error = X509_STORE_CTX_get_error(store_ctx);
      outcome->depth = X509_STORE_CTX_get_error_depth(store_ctx);
    }
  }
  return 0;
}

// The SSL_CTX ex_data slot holding the SNI name (a std::string owned by the caller).
int SniIndex() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// At the start of every handshake, before the ClientHello is built: replace the SNI the HTTP
// library set (its connect host) with ours.
void SniInfoCallback(const SSL* ssl, int where, int /*ret*/) {
  if (!(where & SSL_CB_HANDSHAKE_START)) return;
  const auto* name =
      static_cast<const std::string*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), SniIndex()));
  if (name != nullptr && !name->empty())
    SSL_set_tlsext_host_name(const_cast<SSL*>(ssl), name->c_str());
}

}  // namespace

bool SendSniAs(SSL_CTX* ctx, const std::string* server_name) {
  if (server_name == nullptr || server_name->empty() || IsIpLiteral(*server_name)) return true;
  if (SniIndex() < 0 ||
      SSL_CTX_set_ex_data(ctx, SniIndex(), const_cast<std::string*>(server_name)) != 1)
    return false;
  SSL_CTX_set_info_callback(ctx, SniInfoCallback);
  return true;
}

Result<std::shared_ptr<const CaBundle>> CaBundle::FromPem(const std::string& pem,
                                                          const std::string& what) {
  auto bundle = std::make_shared<CaBundle>();
  bundle->certs_ = ReadCerts(pem);
  if (bundle->certs_.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     what + " holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)");
  }
  return std::shared_ptr<const CaBundle>(std::move(bundle));
}

X509_STORE* CaBundle::NewStore() const {
  X509_STORE* store = X509_STORE_new();
  for (const auto& c : certs_) X509_STORE_add_cert(store, c.get());
  return store;
}

Result<std::shared_ptr<const ClientIdentity>> ClientIdentity::FromPem(const std::string& cert_pem,
                                                                      const std::string& key_pem,
                                                                      const std::string& what) {
  auto id = std::make_shared<ClientIdentity>();
  std::vector<X509Ptr> certs = ReadCerts(cert_pem);
  if (certs.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     what + ": the client certificate holds no PEM certificate");
  }
  id->cert_ = std::move(certs.front());
  for (size_t i = 1; i < certs.size(); ++i) id->chain_.push_back(std::move(certs[i]));
  auto bio = MemBio(key_pem);
  id->key_.reset(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  ERR_clear_error();
  if (!id->key_) {
    return MakeError(ErrorCode::kInvalidArgument,
                     what +
                         ": the client key is not a PEM private key (encrypted keys are "
                         "unsupported)");
  }
  if (X509_check_private_key(id->cert_.get(), id->key_.get()) != 1) {
    ERR_clear_error();
    return MakeError(ErrorCode::kInvalidArgument,
                     what + ": the client key does not match the client certificate");
  }
  return std::shared_ptr<const ClientIdentity>(std::move(id));
}

bool ConfigureStrictVerify(SSL_CTX* ctx, const CaBundle* ca, const std::string& verify_name,
                           VerifyOutcome* outcome) {
  if (ca) {
    SSL_CTX_set_cert_store(ctx, ca->NewStore());  // replaces (and frees) the default store
  } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
    return false;
  }
  X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx);
  if (IsIpLiteral(verify_name)) {
    if (X509_VERIFY_PARAM_set1_ip_asc(param, verify_name.c_str()) != 1) return false;
  } else {
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (X509_VERIFY_PARAM_set1_host(param, verify_name.c_str(), verify_name.size()) != 1)
      return false;
  }
  X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER);
  SSL_CTX_set_app_data(ctx, outcome);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, VerifyCallback);
  return true;
}

std::string DescribeVerifyError(int code, const std::string& ca_description,
                                const std::string& verify_name) {
  switch (code) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return "server certificate not signed by " + ca_description;
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return "server certificate is not valid for \"" + verify_name +
             "\" (set tls-server-name in the kubeconfig if the apiserver certificate names "
             "another host)";
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "server certificate has expired";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "server certificate is not yet valid (check the clock)";
    case X509_V_ERR_INVALID_PURPOSE:
      return "server certificate is not valid for TLS server authentication";
    default:
      return std::string("server certificate rejected: ") + X509_verify_cert_error_string(code);
  }
}

bool IsIpLiteral(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace gpuattr::kube
