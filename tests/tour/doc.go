// Package tour runs the README's five-minute tour verbatim, so the first
// thing a newcomer reads keeps working. It needs what `make demo` leaves
// behind (bin/mur, build/demo/providerd, the components beside their
// murmur.yaml) and runs only with MUR_TEST_TOUR=1: `make test-tour`.
package tour
