// The test PKI must really be a PKI: the server and client certs verify against the CA (and not
// against the other CA), carry the promised names, and their keys match.
#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <filesystem>
#include <memory>

#include "support/paths.h"
#include "support/test_certs.h"

namespace gpuattr::testing {
namespace {

std::shared_ptr<X509> Cert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* c = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return {c, X509_free};
}

std::shared_ptr<EVP_PKEY> Key(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* k = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return {k, EVP_PKEY_free};
}

// Verifies `leaf` against a store holding only `ca`; returns the X509_V_ERR code (0 = ok).
int Verify(const std::string& leaf_pem, const std::string& ca_pem, int purpose) {
  auto leaf = Cert(leaf_pem);
  auto ca = Cert(ca_pem);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca.get());
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf.get(), nullptr);
  X509_STORE_CTX_set_purpose(ctx, purpose);
  int ok = X509_verify_cert(ctx);
  int err = ok == 1 ? 0 : X509_STORE_CTX_get_error(ctx);
  if (ok != 1 && err == 0) err = -1;
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return err;
}

std::string SubjectField(X509* cert, int nid) {
  std::string all;
  X509_NAME* name = X509_get_subject_name(cert);
  for (int i = X509_NAME_get_index_by_NID(name, nid, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(name, nid, i)) {
    ASN1_STRING* s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    if (!all.empty()) all += ",";
    all.append(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
               static_cast<size_t>(ASN1_STRING_length(s)));
  }
  return all;
}

TEST(TestCerts, ServerAndClientVerifyAgainstTheirCaOnly) {
  TestPki pki = MakeTestPki({"apiserver.test"});
  EXPECT_EQ(Verify(pki.server.cert_pem, pki.ca.cert_pem, X509_PURPOSE_SSL_SERVER), 0);
  EXPECT_EQ(Verify(pki.client.cert_pem, pki.ca.cert_pem, X509_PURPOSE_SSL_CLIENT), 0);
  EXPECT_EQ(Verify(pki.server.cert_pem, pki.other_ca.cert_pem, X509_PURPOSE_SSL_SERVER),
            X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
  EXPECT_NE(pki.ca.cert_pem, pki.other_ca.cert_pem);
}

TEST(TestCerts, ServerCertNamesAndKeyMatch) {
  TestPki pki = MakeTestPki({"apiserver.test"});
  auto server = Cert(pki.server.cert_pem);
  ASSERT_TRUE(server);
  EXPECT_EQ(X509_check_host(server.get(), "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(server.get(), "apiserver.test", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(server.get(), "other.test", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_ip_asc(server.get(), "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(server.get(), "127.0.0.2", 0), 0);
  auto key = Key(pki.server.key_pem);
  ASSERT_TRUE(key);
  EXPECT_EQ(X509_check_private_key(server.get(), key.get()), 1);
  auto other_key = Key(pki.client.key_pem);
  EXPECT_EQ(X509_check_private_key(server.get(), other_key.get()), 0);
}

TEST(TestCerts, ServerCertWithoutDefaultsHasOnlyTheGivenName) {
  TestPki pki = MakeTestPki();
  auto only = Cert(MakeServerCert(pki.ca, {"kubernetes.internal"}, false).cert_pem);
  EXPECT_EQ(X509_check_host(only.get(), "kubernetes.internal", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(only.get(), "localhost", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_ip_asc(only.get(), "127.0.0.1", 0), 0);
}

TEST(TestCerts, ClientCertCarriesCommonNameAndOrganizations) {
  TestPki pki = MakeTestPki();
  auto c = Cert(MakeClientCert(pki.ca, "alice", {"team-a", "team-b"}).cert_pem);
  ASSERT_TRUE(c);
  EXPECT_EQ(SubjectField(c.get(), NID_commonName), "alice");
  EXPECT_EQ(SubjectField(c.get(), NID_organizationName), "team-a,team-b");
  EXPECT_EQ(SubjectField(Cert(pki.client.cert_pem).get(), NID_commonName), "gpuattr-test");
}

TEST(TestCerts, WritePkiWritesReadableFilesWithPrivateKeys) {
  TestPki pki = MakeTestPki();
  auto dir = std::filesystem::temp_directory_path() /
             ("gpuattr-certs-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
              "-" + std::to_string(reinterpret_cast<uintptr_t>(&pki)));
  PkiFiles files = WritePki(pki, dir);
  EXPECT_EQ(ReadFile(files.ca_crt), pki.ca.cert_pem);
  EXPECT_EQ(ReadFile(files.client_key), pki.client.key_pem);
  EXPECT_EQ(ReadFile(files.other_ca_crt), pki.other_ca.cert_pem);
  auto perms = std::filesystem::status(files.server_key).permissions();
  EXPECT_EQ(perms & std::filesystem::perms::group_read, std::filesystem::perms::none);
  EXPECT_EQ(perms & std::filesystem::perms::others_read, std::filesystem::perms::none);
  std::filesystem::remove_all(dir);
}

TEST(TestCerts, Base64MatchesRfc4648Vectors) {
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foo"), "Zm9v");
  EXPECT_EQ(Base64("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64("foobar"), "Zm9vYmFy");
}

}  // namespace
}  // namespace gpuattr::testing
