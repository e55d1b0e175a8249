package findings

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/queryreplay/queryreplay/pkg/showplan"
)

// Server is what the rules know of the server's version and the database's
// compatibility level: together they decide which intelligent query
// processing features a hint may promise.
type Server struct {
	// Major is the product's major version (14 = SQL Server 2017, 15 =
	// 2019, 16 = 2022); 0 when unknown.
	Major int
	// CompatLevel is the database compatibility level; 0 when unknown.
	// CompatFromCE: it was read from the plan's
	// CardinalityEstimationModelVersion, which equals the compatibility
	// level unless the legacy estimator is forced, so it is a best guess.
	CompatLevel  int
	CompatFromCE bool
}

// ServerOf reads the server's major version from productVersion (the
// bundle's SERVERPROPERTY('ProductVersion'), "15.0.2000.5"), else from the
// plan's ShowPlanXML Build attribute.
func ServerOf(productVersion string, plan *showplan.Plan) Server {
	s := Server{Major: majorOf(productVersion)}
	if s.Major == 0 && plan != nil {
		s.Major = majorOf(plan.Build)
	}
	return s
}

func majorOf(v string) int {
	head, _, _ := strings.Cut(strings.TrimSpace(v), ".")
	n, err := strconv.Atoi(head)
	if err != nil || n < 7 || n > 99 {
		return 0
	}
	return n
}

// compat returns the compatibility level the rules assume: the known one,
// else the plan's CE model version (and whether it is that guess).
func (a *analysis) compat() (int, bool) {
	if c := a.in.Server.CompatLevel; c > 0 {
		return c, a.in.Server.CompatFromCE
	}
	if a.in.Plan != nil {
		if n, err := strconv.Atoi(a.in.Plan.CEModelVersion); err == nil && n >= 120 {
			return n, true
		}
	}
	return 0, false
}

// grantFeedback says what memory grant feedback can do for a repeated run
// of this statement, per
// https://learn.microsoft.com/en-us/sql/relational-databases/performance/intelligent-query-processing-memory-grant-feedback:
// batch mode from SQL Server 2017 (14.x) at compatibility level 140, row
// mode from SQL Server 2019 (15.x) at compatibility level 150. The plan's
// IsMemoryGrantFeedbackAdjusted attribute, when present, is the server's
// own word. It returns "" when feedback cannot be promised.
func (a *analysis) grantFeedback(batch bool) string {
	if g := a.in.Plan; g != nil && g.MemoryGrant != nil && g.MemoryGrant.FeedbackAdjusted != "" {
		return "memory grant feedback is active for this plan (IsMemoryGrantFeedbackAdjusted: " + g.MemoryGrant.FeedbackAdjusted + ") and adjusts repeated runs"
	}
	major := a.in.Server.Major
	level, guessed := a.compat()
	needMajor, needLevel, mode := 15, 150, "row-mode"
	if batch {
		needMajor, needLevel, mode = 14, 140, "batch-mode"
	}
	if major == 0 || level == 0 || major < needMajor || level < needLevel {
		return ""
	}
	s := mode + " memory grant feedback (SQL Server " + strconv.Itoa(major) + ".x, compatibility level " + strconv.Itoa(level)
	if guessed {
		s += " as the plan's estimator version suggests"
	}
	return s + ") adjusts repeated runs"
}

// noFeedbackWhy says why feedback is not promised, for the hint.
func (a *analysis) noFeedbackWhy(batch bool) string {
	major := a.in.Server.Major
	level, _ := a.compat()
	switch {
	case major == 0 && level == 0:
		return "the server version is unknown, so memory grant feedback is not promised"
	case !batch && major > 0 && major < 15:
		return "row-mode memory grant feedback needs SQL Server 2019 (15.x); this server is " + strconv.Itoa(major) + ".x"
	case !batch && level > 0 && level < 150:
		return "row-mode memory grant feedback needs compatibility level 150; this database is at " + strconv.Itoa(level)
	case batch && major > 0 && major < 14:
		return "memory grant feedback needs SQL Server 2017 (14.x); this server is " + strconv.Itoa(major) + ".x"
	case batch && level > 0 && level < 140:
		return "batch-mode memory grant feedback needs compatibility level 140; this database is at " + strconv.Itoa(level)
	}
	return "memory grant feedback is not promised (version or compatibility level unknown)"
}

// grantHintRE finds a statement's own grant hints in OPTION (...).
var grantHintRE = regexp.MustCompile(`(?is)\bOPTION\s*\([^)]*\b(MIN_GRANT_PERCENT|MAX_GRANT_PERCENT)\b`)

// ownGrantHint returns the grant hint the statement itself carries (its
// plan text, else the traced batch), or "".
func (a *analysis) ownGrantHint() string {
	text := a.in.Run.BatchText
	if a.in.Plan != nil && a.in.Plan.Text != "" {
		text = a.in.Plan.Text
	}
	if len(text) > 1<<20 {
		text = text[:1<<20]
	}
	if m := grantHintRE.FindStringSubmatch(text); m != nil {
		return strings.ToUpper(m[1])
	}
	return ""
}
