#include "support/test_certs.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <fstream>
#include <memory>
#include <stdexcept>

namespace gpuattr::testing {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Free>;
using X509Ptr = std::unique_ptr<X509, Free>;
using BioPtr = std::unique_ptr<BIO, Free>;

[[noreturn]] void Fail(const std::string& what) {
  throw std::runtime_error("test_certs: " + what + " failed");
}

PkeyPtr NewKey() {
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) Fail("EVP_EC_gen(P-256)");
  return key;
}

std::string BioToString(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(len));
}

std::string KeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr))
    Fail("PEM_write_bio_PrivateKey");
  return BioToString(bio.get());
}

std::string CertPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_X509(bio.get(), cert)) Fail("PEM_write_bio_X509");
  return BioToString(bio.get());
}

X509Ptr ParseCert(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) Fail("PEM_read_bio_X509");
  return cert;
}

PkeyPtr ParseKey(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) Fail("PEM_read_bio_PrivateKey");
  return key;
}

void AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  std::unique_ptr<X509_EXTENSION, Free> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!ext) Fail("X509V3_EXT_conf_nid(" + value + ")");
  if (!X509_add_ext(cert, ext.get(), -1)) Fail("X509_add_ext");
}

// A certificate for `subject_key` with subject fields `names` ({"CN","x"},{"O","y"}), valid from
// an hour ago for ten years, signed by `issuer_key` (self-signed when `issuer` is null).
X509Ptr NewCert(EVP_PKEY* subject_key,
                const std::vector<std::pair<std::string, std::string>>& names, X509* issuer,
                EVP_PKEY* issuer_key, const std::vector<std::pair<int, std::string>>& extensions) {
  X509Ptr cert(X509_new());
  if (!cert) Fail("X509_new");
  X509_set_version(cert.get(), 2);  // v3
  unsigned char serial_bytes[16];
  if (RAND_bytes(serial_bytes, sizeof serial_bytes) != 1) Fail("RAND_bytes");
  serial_bytes[0] &= 0x7f;  // positive
  std::unique_ptr<BIGNUM, Free> serial(BN_bin2bn(serial_bytes, sizeof serial_bytes, nullptr));
  if (!serial || !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())))
    Fail("serial number");
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  for (const auto& [field, value] : names) {
    if (!X509_NAME_add_entry_by_txt(name, field.c_str(), MBSTRING_UTF8,
                                    reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                    0))
      Fail("X509_NAME_add_entry_by_txt(" + field + ")");
  }
  X509* signer = issuer ? issuer : cert.get();
  if (!X509_set_issuer_name(cert.get(), X509_get_subject_name(signer))) Fail("set issuer");
  if (!X509_set_pubkey(cert.get(), subject_key)) Fail("X509_set_pubkey");
  for (const auto& [nid, value] : extensions) AddExtension(cert.get(), signer, nid, value);
  if (!X509_sign(cert.get(), issuer_key, EVP_sha256())) Fail("X509_sign");
  return cert;
}

CertAndKey SignedLeaf(const CertAndKey& ca,
                      const std::vector<std::pair<std::string, std::string>>& names,
                      const std::vector<std::pair<int, std::string>>& extensions) {
  X509Ptr ca_cert = ParseCert(ca.cert_pem);
  PkeyPtr ca_key = ParseKey(ca.key_pem);
  PkeyPtr key = NewKey();
  X509Ptr cert = NewCert(key.get(), names, ca_cert.get(), ca_key.get(), extensions);
  return {CertPem(cert.get()), KeyPem(key.get())};
}

void WriteFile(const std::filesystem::path& path, const std::string& data, bool secret) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("test_certs: cannot write " + path.string());
    out << data;
  }
  if (secret) {
    std::filesystem::permissions(
        path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  }
}

}  // namespace

CertAndKey MakeCa(const std::string& common_name) {
  PkeyPtr key = NewKey();
  X509Ptr cert = NewCert(key.get(), {{"CN", common_name}}, nullptr, key.get(),
                         {{NID_basic_constraints, "critical,CA:TRUE"},
                          {NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature"},
                          {NID_subject_key_identifier, "hash"}});
  return {CertPem(cert.get()), KeyPem(key.get())};
}

CertAndKey MakeServerCert(const CertAndKey& ca, const std::vector<std::string>& extra_dns,
                          bool include_defaults) {
  std::string san;
  auto add = [&san](const std::string& entry) {
    if (!san.empty()) san += ",";
    san += entry;
  };
  if (include_defaults) {
    add("DNS:localhost");
    add("IP:127.0.0.1");
  }
  for (const auto& dns : extra_dns) add("DNS:" + dns);
  if (san.empty()) throw std::runtime_error("test_certs: a server cert needs at least one SAN");
  return SignedLeaf(ca, {{"CN", include_defaults ? "localhost" : extra_dns.front()}},
                    {{NID_basic_constraints, "critical,CA:FALSE"},
                     {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                     {NID_ext_key_usage, "serverAuth"},
                     {NID_subject_alt_name, san},
                     {NID_authority_key_identifier, "keyid"}});
}

CertAndKey MakeClientCert(const CertAndKey& ca, const std::string& common_name,
                          const std::vector<std::string>& organizations) {
  std::vector<std::pair<std::string, std::string>> names;
  for (const auto& org : organizations) names.emplace_back("O", org);
  names.emplace_back("CN", common_name);
  return SignedLeaf(ca, names,
                    {{NID_basic_constraints, "critical,CA:FALSE"},
                     {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                     {NID_ext_key_usage, "clientAuth"},
                     {NID_authority_key_identifier, "keyid"}});
}

TestPki MakeTestPki(const std::vector<std::string>& extra_server_dns) {
  TestPki pki;
  pki.ca = MakeCa("gpuattr-test-ca");
  pki.server = MakeServerCert(pki.ca, extra_server_dns);
  pki.client = MakeClientCert(pki.ca, "gpuattr-test", {"gpuattr:readers"});
  pki.other_ca = MakeCa("gpuattr-other-ca");
  return pki;
}

PkiFiles WritePki(const TestPki& pki, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  PkiFiles f{dir / "ca.crt",     dir / "ca.key",     dir / "server.crt",   dir / "server.key",
             dir / "client.crt", dir / "client.key", dir / "other-ca.crt", dir / "other-ca.key"};
  WriteFile(f.ca_crt, pki.ca.cert_pem, false);
  WriteFile(f.ca_key, pki.ca.key_pem, true);
  WriteFile(f.server_crt, pki.server.cert_pem, false);
  WriteFile(f.server_key, pki.server.key_pem, true);
  WriteFile(f.client_crt, pki.client.cert_pem, false);
  WriteFile(f.client_key, pki.client.key_pem, true);
  WriteFile(f.other_ca_crt, pki.other_ca.cert_pem, false);
  WriteFile(f.other_ca_key, pki.other_ca.key_pem, true);
  return f;
}

std::string Base64(const std::string& data) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(data[i]) << 16) |
                 (static_cast<unsigned char>(data[i + 1]) << 8) |
                 static_cast<unsigned char>(data[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  size_t rest = data.size() - i;
  if (rest > 0) {
    unsigned v = static_cast<unsigned char>(data[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(data[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace gpuattr::testing
