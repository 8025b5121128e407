// Package escape is the escape-conformance suite: real processes under the
// sandbox try every way out the spec names, and the suite fails on any that
// gets through. It needs Linux, root and namespaces, so it runs only with
// MUR_TEST_PRIVILEGED=1 (make test-escape); the cases are in the _test
// files.
package escape
