package findings

import (
	"fmt"
	"math"
	"strconv"
)

// Count writes n with thousands separators: 14600 → "14,600".
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	if neg {
		out = append(out, '-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// Percent writes a share as a whole percentage ("85%"); a share that is not
// zero never shows as 0% and one short of everything never as 100%.
func Percent(share float64) string {
	p := share * 100
	switch {
	case p > 0 && p < 1:
		return "<1%"
	case p < 100 && p > 99:
		return ">99%"
	}
	return fmt.Sprintf("%.0f%%", math.Round(p))
}

// KB writes a memory size given in KB: "1,024 KB", "12.5 MB", "2.1 GB".
func KB(kb int64) string {
	switch {
	case kb >= 1<<20:
		return fmt.Sprintf("%.1f GB", float64(kb)/(1<<20))
	case kb >= 10<<10:
		return fmt.Sprintf("%.1f MB", float64(kb)/(1<<10))
	}
	return Count(kb) + " KB"
}

// Bytes writes a byte count: "812 bytes", "312 KB", "4.2 MB".
func Bytes(b int64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
	case b >= 1<<10:
		return Count((b+512)>>10) + " KB"
	}
	return Count(b) + " bytes"
}

// Duration writes µs the way a DBA reads them: "340 µs", "12.4 ms", "2.4 s".
func Duration(us int64) string {
	switch {
	case us >= 10_000_000:
		return fmt.Sprintf("%.0f s", float64(us)/1e6)
	case us >= 1_000_000:
		return fmt.Sprintf("%.1f s", float64(us)/1e6)
	case us >= 10_000:
		return fmt.Sprintf("%.0f ms", float64(us)/1e3)
	case us >= 1_000:
		return fmt.Sprintf("%.1f ms", float64(us)/1e3)
	}
	return fmt.Sprintf("%d µs", us)
}

// plural returns "1 page" or "2 pages" (with the count formatted).
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Count(n) + " " + many
}

func share(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(part) / float64(whole)
}
