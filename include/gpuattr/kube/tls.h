// OpenSSL helpers for the apiserver transport: parsing CA bundles and client identities from PEM
// (held in memory, never written to disk), strict verification setup on an SSL_CTX, and
// readable descriptions of certificate verification failures.
#pragma once

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <vector>

#include "gpuattr/util/status.h"

namespace gpuattr::kube {

struct X509Deleter {
  void operator()(X509* p) const { X509_free(p); }
};
struct PkeyDeleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;

// Certificates of a PEM bundle. `what` names the source in errors ("the CA in /path/ca.crt").
class CaBundle {
 public:
  static Result<std::shared_ptr<const CaBundle>> FromPem(const std::string& pem,
                                                         const std::string& what);
  // A new store holding these certificates only (the caller hands it to an SSL_CTX).
  X509_STORE* NewStore() const;
  size_t size() const { return certs_.size(); }

 private:
  std::vector<X509Ptr> certs_;
};

// A client certificate (first certificate of the PEM; the rest is the chain) and its key.
class ClientIdentity {
 public:
  // Checks that the key matches the certificate. Errors name `what`, never the content.
  static Result<std::shared_ptr<const ClientIdentity>> FromPem(const std::string& cert_pem,
                                                               const std::string& key_pem,
                                                               const std::string& what);
  X509* cert() const { return cert_.get(); }
  EVP_PKEY* key() const { return key_.get(); }
  const std::vector<X509Ptr>& chain() const { return chain_; }

 private:
  X509Ptr cert_;
  PkeyPtr key_;
  std::vector<X509Ptr> chain_;
};

// Records the first certificate verification failure seen by an SSL_CTX.
struct VerifyOutcome {
  int error = 0;  // X509_V_ERR_*; 0 when none was recorded
  int depth = -1;
};

// Makes `ctx` verify the peer itself: only `ca` (or the system CAs when `ca` is null), the
// hostname or IP `verify_name`, and failures recorded into `*outcome` (which must outlive ctx).
// Returns false when OpenSSL refuses a parameter.
bool ConfigureStrictVerify(SSL_CTX* ctx, const CaBundle* ca, const std::string& verify_name,
                           VerifyOutcome* outcome);

// Makes every handshake on `ctx` send `*server_name` as SNI (the kubeconfig's tls-server-name),
// whatever host the connection was opened to (the URL's host, or a proxy's CONNECT target).
// Nothing is changed for an empty name or an IP address (SNI carries host names only, as Go's
// crypto/tls). `server_name` must outlive `ctx`. False when OpenSSL refuses.
bool SendSniAs(SSL_CTX* ctx, const std::string* server_name);

// "server certificate not signed by the CA in /path/ca.crt", "... is not valid for host ..." etc.
std::string DescribeVerifyError(int code, const std::string& ca_description,
                                const std::string& verify_name);

// True for dotted IPv4 and (bracket-less) IPv6 literals.
bool IsIpLiteral(const std::string& host);

}  // namespace gpuattr::kube
