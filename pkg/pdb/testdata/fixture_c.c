/* C fixture for pkg/pdb tests: undecorated C names, a static function and
   read-only data in its own section. */
static int internal_mul(int a, int b) { return a * b; }
int util_add(int a, int b) { return a + b; }
const char greeting[] = "hello from .rdata";
int c_entry(int a) { return util_add(a, internal_mul(a, 3)) + greeting[0]; }
__declspec(dllexport) int exported_fn(int x) { return c_entry(x); }
int _DllMainCRTStartup(void *h, unsigned long r, void *p) { return 1; }
/* clang may emit calls to memset for zero-initialised aggregates. */
void *memset(void *dst, int c, unsigned long long n) {
  unsigned char *p = dst;
  while (n--) *p++ = (unsigned char)c;
  return dst;
}
