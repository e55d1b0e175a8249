//go:build !unix

package showplan

import "time"

// processCPUTime is unavailable here; the cpu-ms/MB metric then reads 0.
func processCPUTime() time.Duration { return 0 }
