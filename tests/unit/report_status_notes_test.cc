// Notes (optional parts left out, such as a DRA kind the ClusterRole does not grant) reach the
// status page beside the cluster's errors, escaped, without turning the cluster down.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuattr/model/snapshot.h"
#include "gpuattr/report/status_page.h"

namespace gpuattr::report {
namespace {

using ::testing::HasSubstr;

TEST(ReportStatusPage, NotesAreShownEscapedBesideNoErrors) {
  model::Snapshot s;
  s.complete = true;
  model::ClusterSnapshot c;
  c.cluster = "prod";
  c.latest.up = true;
  c.cycles = 3;
  c.latest.notes = {
      "DRA resourceclaims (resource.k8s.io/v1) not read: cannot list resource "
      "\"resourceclaims\" <config/kubernetes/clusterrole.yaml>"};
  s.clusters.push_back(c);
  std::string html = RenderStatusPage(s, 0);
  EXPECT_THAT(html, HasSubstr("class=\"b up\">up<"));
  EXPECT_THAT(html, HasSubstr("none"));  // no errors
  EXPECT_THAT(html, HasSubstr("Note: DRA resourceclaims (resource.k8s.io/v1) not read: cannot "
                              "list resource &quot;resourceclaims&quot; "
                              "&lt;config/kubernetes/clusterrole.yaml&gt;"));

  s.clusters[0].latest.notes.clear();
  EXPECT_THAT(RenderStatusPage(s, 0), ::testing::Not(HasSubstr("Note:")));
}

}  // namespace
}  // namespace gpuattr::report
