package xe

// SetFastPaths turns the decoder's fast paths (fastpath.go) on or off, so
// tests can hold them to the generic code's results.
func SetFastPaths(on bool) { fastPathsOff = !on }
