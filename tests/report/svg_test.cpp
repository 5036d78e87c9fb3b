// Tests of the SVG writer: escaping, ticks and labels, and that charts are well formed, draw
// exactly the drawable points, honor log axes and never contain a URL.
#include "report/svg.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "report/markup_check.hpp"

namespace carb::svg {
namespace {

using carb::testing::count_of;
using carb::testing::markup_problem;

struct EscapeCase {
  const char* in;
  const char* out;
};

class SvgEscape : public ::testing::TestWithParam<EscapeCase> {};

TEST_P(SvgEscape, ReplacesMarkupCharacters) { EXPECT_EQ(escape(GetParam().in), GetParam().out); }

INSTANTIATE_TEST_SUITE_P(Cases, SvgEscape,
                         ::testing::Values(EscapeCase{"plain", "plain"}, EscapeCase{"a<b", "a&lt;b"},
                                           EscapeCase{"x > y & z", "x &gt; y &amp; z"},
                                           EscapeCase{"\"q\" 'r'", "&quot;q&quot; &#39;r&#39;"},
                                           EscapeCase{"", ""},
                                           // Hundred-and-second hostile pass: bytes that are no UTF-8
                                           // character reached a page that declares UTF-8.
                                           EscapeCase{"d\xff.csv", "d\xEF\xBF\xBD.csv"},
                                           EscapeCase{"\xC3\xA9t\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x98\x80",
                                                      "\xC3\xA9t\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x98\x80"},
                                           EscapeCase{"\xC3", "\xEF\xBF\xBD"},              // cut short
                                           EscapeCase{"\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD"},  // overlong '/'
                                           EscapeCase{"\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},  // surrogate
                                           EscapeCase{"\x80<", "\xEF\xBF\xBD&lt;"},
                                           // A sequence cut short is one replacement (its maximal subpart),
                                           // as a browser or Python decodes it, not one per byte.
                                           EscapeCase{"\xE2\x82<", "\xEF\xBF\xBD&lt;"},
                                           EscapeCase{"a\xF0\x9F\x98", "a\xEF\xBF\xBD"},
                                           EscapeCase{"\xF0\x9F\x98\xE2\x82\xAC", "\xEF\xBF\xBD\xE2\x82\xAC"},
                                           EscapeCase{"\xF4\x90\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"}));

TEST(Svg, LinearTicksAreNiceAndCoverTheRange) {
  EXPECT_EQ(linear_ticks(0, 10), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  const auto t = linear_ticks(0.31, 0.69);
  ASSERT_GE(t.size(), 3u);
  for (double v : t) EXPECT_TRUE(v >= 0.31 - 1e-12 && v <= 0.69 + 1e-12) << v;
  EXPECT_NEAR(t[1] - t[0], 0.1, 1e-12);
  EXPECT_EQ(linear_ticks(-1, 1, 2), (std::vector<double>{-1, 0, 1}));
  EXPECT_EQ(linear_ticks(3, 3).size(), 1u);
}

TEST(Svg, LogTicksUseDecadesOrFineSteps) {
  EXPECT_EQ(log_ticks(1, 1000), (std::vector<double>{1, 10, 100, 1000}));
  EXPECT_EQ(log_ticks(1, 50), (std::vector<double>{1, 2, 5, 10, 20, 50}));
  EXPECT_TRUE(log_ticks(0, 10).empty());
  EXPECT_TRUE(log_ticks(-5, 10).empty());
}

TEST(Svg, TickLabelsAreCompact) {
  EXPECT_EQ(tick_label(0), "0");
  EXPECT_EQ(tick_label(2.5), "2.5");
  EXPECT_EQ(tick_label(1500), "1500");
  EXPECT_EQ(tick_label(25000), "25k");
  EXPECT_EQ(tick_label(3.2e6), "3.2M");
  EXPECT_EQ(tick_label(0.0002), "2.0e-04");
}

XYChart synthetic_chart() {
  XYChart c;
  c.title = "latency <ms> & energy";
  c.x = {"batch", true};
  c.y = {"ms", false};
  c.series.push_back({"a<b", {1, 2, 4, 8}, {1, 2, 3, 4}, Series::Style::points, ""});
  c.series.push_back({"line", {1, 8}, {4, 1}, Series::Style::line, ""});
  c.lines.push_back({1, 1, 8, 4, "y = x", "#000000", true});
  return c;
}

TEST(Svg, XYChartIsWellFormedAndEscaped) {
  const std::string s = render(synthetic_chart());
  EXPECT_EQ(markup_problem(s), "") << s;
  EXPECT_EQ(s.rfind("<svg", 0), 0u);
  EXPECT_NE(s.find("latency &lt;ms&gt; &amp; energy"), std::string::npos);
  EXPECT_NE(s.find(">a&lt;b</text>"), std::string::npos);
  EXPECT_EQ(s.find("a<b"), std::string::npos);
  EXPECT_EQ(s.find("http"), std::string::npos);
  EXPECT_EQ(count_of(s, "<circle"), 4u);  // the line series draws no markers
  EXPECT_EQ(count_of(s, "<path"), 1u);
  EXPECT_EQ(count_of(s, "stroke-dasharray"), 2u);  // the reference line and its legend swatch
}

TEST(Svg, LogAxisSkipsNonPositiveAndNonFinitePoints) {
  XYChart c;
  c.x = {"x", true};
  c.y = {"y", true};
  c.series.push_back({"", {1, 0, -3, 10, 100, std::nan("")}, {1, 5, 5, 0, 10, 3}, Series::Style::points, ""});
  const std::string s = render(c);
  EXPECT_EQ(markup_problem(s), "");
  EXPECT_EQ(count_of(s, "<circle"), 2u);  // (1,1) and (100,10)
}

TEST(Svg, TitleCanBeLeftToThePage) {
  XYChart c = synthetic_chart();
  c.draw_title = false;
  const std::string s = render(c);
  EXPECT_EQ(markup_problem(s), "");
  EXPECT_EQ(count_of(s, "latency &lt;ms&gt; &amp; energy"), 2u);  // <title> and aria-label only
  EXPECT_EQ(count_of(render(synthetic_chart()), "latency &lt;ms&gt; &amp; energy"), 3u);
}

TEST(Svg, DashedSeriesAndLegendSwatch) {
  XYChart c;
  c.series.push_back({"bottleneck", {1, 2}, {1, 2}, Series::Style::line, "#123456", true});
  const std::string s = render(c);
  EXPECT_EQ(count_of(s, "stroke-dasharray=\"6 3\""), 1u);
  EXPECT_EQ(count_of(s, "stroke-dasharray=\"5 3\""), 1u);
}

TEST(Svg, NarrowLogAxisStillHasTicks) {
  XYChart c;
  c.x = {"x", true};
  c.y = {"y", true};
  c.series.push_back({"", {1.19, 1.5}, {1.19, 1.5}, Series::Style::points, ""});
  const std::string s = render(c);
  EXPECT_GE(count_of(s, "text-anchor=\"end\""), 2u);                      // y tick labels
  EXPECT_GE(count_of(s, "text-anchor=\"middle\" font-size=\"11\""), 2u);  // x tick labels
}

TEST(Svg, EmptyChartSaysNoData) {
  XYChart c;
  c.title = "empty";
  const std::string s = render(c);
  EXPECT_EQ(markup_problem(s), "");
  EXPECT_NE(s.find("no data"), std::string::npos);
  EXPECT_EQ(count_of(s, "<circle"), 0u);
}

TEST(Svg, BarChartDrawsOneRectPerValueAndMarksMissing) {
  BarChart b;
  b.title = "J per GFLOP";
  b.categories = {"1-4", "5-16", "17-64"};
  b.groups.push_back({"fp32", {3, 2, 1}, ""});
  b.groups.push_back({"fp16", {2.5, std::numeric_limits<double>::quiet_NaN(), 0.8}, ""});
  const std::string s = render(b);
  EXPECT_EQ(markup_problem(s), "") << s;
  EXPECT_EQ(count_of(s, "<rect"), 1u /*background*/ + 2u /*legend*/ + 5u /*bars*/);
  EXPECT_EQ(count_of(s, ">n/a<"), 1u);
  EXPECT_NE(s.find(">17-64</text>"), std::string::npos);
}

TEST(Svg, BarsOnLogAxisStartAtTheDomainFloor) {
  BarChart b;
  b.categories = {"a", "b"};
  b.groups.push_back({"", {0.1, 1000}, ""});
  b.y = {"ratio", true};
  const std::string s = render(b);
  EXPECT_EQ(markup_problem(s), "");
  EXPECT_EQ(count_of(s, "<rect"), 3u);
  EXPECT_EQ(s.find("height=\"-"), std::string::npos);
  EXPECT_EQ(s.find("nan"), std::string::npos);
}

TEST(Svg, PaletteCycles) {
  EXPECT_EQ(palette(0), palette(8));
  EXPECT_NE(palette(0), palette(1));
}

}  // namespace
}  // namespace carb::svg
