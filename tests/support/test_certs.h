// Test PKI generated in memory with OpenSSL 3 (EC P-256 keys, SHA-256 signatures): a CA, a server
// certificate it signed (SANs DNS:localhost, IP:127.0.0.1 and any extra DNS names), client
// certificates (CN and O given) and an unrelated "other" CA for wrong-CA tests. Everything is PEM.
// Failures throw std::runtime_error (test support only; the product code never uses this).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gpuattr::testing {

struct CertAndKey {
  std::string cert_pem;
  std::string key_pem;  // PKCS#8 "BEGIN PRIVATE KEY"
};

// A self-signed CA certificate (basicConstraints CA:TRUE, keyCertSign).
CertAndKey MakeCa(const std::string& common_name);

// A TLS server certificate signed by `ca` with SANs DNS:localhost, IP:127.0.0.1 and `extra_dns`.
// With `include_defaults` false only `extra_dns` is used (e.g. a cert valid for one name only).
CertAndKey MakeServerCert(const CertAndKey& ca, const std::vector<std::string>& extra_dns = {},
                          bool include_defaults = true);

// A TLS client certificate signed by `ca`: subject CN=`common_name`, one O= per organization
// (Kubernetes reads them as user name and groups).
CertAndKey MakeClientCert(const CertAndKey& ca, const std::string& common_name,
                          const std::vector<std::string>& organizations = {});

// The usual set for a TLS test.
struct TestPki {
  CertAndKey ca;
  CertAndKey server;    // signed by ca
  CertAndKey client;    // signed by ca, CN=gpuattr-test O=gpuattr:readers
  CertAndKey other_ca;  // unrelated CA: trusting it must make verification of `server` fail
};
TestPki MakeTestPki(const std::vector<std::string>& extra_server_dns = {});

// Paths written by WritePki.
struct PkiFiles {
  std::filesystem::path ca_crt, ca_key, server_crt, server_key, client_crt, client_key,
      other_ca_crt, other_ca_key;
};
// Writes the PEM files (ca.crt, ca.key, server.crt, server.key, client.crt, client.key,
// other-ca.crt, other-ca.key) into `dir` (created if missing); keys get mode 0600.
PkiFiles WritePki(const TestPki& pki, const std::filesystem::path& dir);

// Base64 of `data` (standard alphabet, no line breaks), as kubeconfig `*-data` fields hold it.
std::string Base64(const std::string& data);

}  // namespace gpuattr::testing
