package sqlconn

import "strings"

// reads reports whether a query reads a catalog view or function.
func reads(query, view string) bool { return strings.Contains(query, view) }
