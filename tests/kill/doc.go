// Package kill is the crash-safety suite: the built mur binary is killed
// with SIGKILL at random moments of mur publish, mur install and mur run,
// at least 200 times, and after every kill the suite checks that nothing
// is left corrupt (murmur.lock, the store indexes and blobs, the machine
// spend meter, the session records), that the next command works, and
// that nothing of a killed session survives it (no process, no cgroup, no
// mount, no sealed root). It also overlaps two runs of one capsule with
// trace.retain.max_sessions: 1 and requires the second's retention to leave
// the running first alone, and runs 8 mur installs at once in one project,
// requiring murmur.lock to keep every pin. It needs the built mur (MUR_KILL_BIN), the
// driver and tool components (MUR_GUEST_OUT) and root for the sandbox, so
// it runs only from make test-kill; the cases are in the _test files.
package kill
