;; A guest that reaches files only through wasi:filesystem, so the host's
;; containment is what the escape tests observe. read-file(path) opens path
;; (following symlinks) under the first preopen and returns its first 4 KiB;
;; write-file(path, data) creates/truncates path and writes data. Handles are
;; left to the store's teardown.
(component $root
  (import "wasi:filesystem/types@0.2.0" (instance $t
    (export "descriptor" (type $d (sub resource)))
    (type $ec' (enum "access" "would-block" "already" "bad-descriptor" "busy" "deadlock"
      "quota" "exist" "file-too-large" "illegal-byte-sequence" "in-progress" "interrupted"
      "invalid" "io" "is-directory" "loop" "too-many-links" "message-size" "name-too-long"
      "no-device" "no-entry" "no-lock" "insufficient-memory" "insufficient-space"
      "not-directory" "not-empty" "not-recoverable" "unsupported" "no-tty" "no-such-device"
      "overflow" "not-permitted" "pipe" "read-only" "invalid-seek" "text-file-busy" "cross-device"))
    (export "error-code" (type $ec (eq $ec')))
    (type $pf' (flags "symlink-follow"))
    (export "path-flags" (type $pf (eq $pf')))
    (type $of' (flags "create" "directory" "exclusive" "truncate"))
    (export "open-flags" (type $of (eq $of')))
    (type $df' (flags "read" "write" "file-integrity-sync" "data-integrity-sync" "requested-write-sync" "mutate-directory"))
    (export "descriptor-flags" (type $df (eq $df')))
    (export "[method]descriptor.open-at" (func (param "self" (borrow $d)) (param "path-flags" $pf)
      (param "path" string) (param "open-flags" $of) (param "flags" $df) (result (result (own $d) (error $ec)))))
    (export "[method]descriptor.read" (func (param "self" (borrow $d)) (param "length" u64)
      (param "offset" u64) (result (result (tuple (list u8) bool) (error $ec)))))
    (export "[method]descriptor.write" (func (param "self" (borrow $d)) (param "buffer" (list u8))
      (param "offset" u64) (result (result u64 (error $ec)))))
  ))
  (alias export $t "descriptor" (type $desc))
  (alias export $t "error-code" (type $errcode))
  (import "wasi:filesystem/preopens@0.2.0" (instance $p
    (alias outer $root $desc (type $d'))
    (export "descriptor" (type $d (eq $d')))
    (export "get-directories" (func (result (list (tuple (own $d) string)))))
  ))

  (core module $libc
    (memory (export "mem") 2)
    (global $bump (mut i32) (i32.const 8192))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      ;; align the bump pointer up, hand it out, advance by size
      (local.set $p (i32.and (i32.add (global.get $bump) (i32.sub (local.get 2) (i32.const 1)))
                             (i32.sub (i32.const 0) (local.get 2))))
      (global.set $bump (i32.add (local.get $p) (local.get 3)))
      (local.get $p))
  )
  (core instance $libc (instantiate $libc))
  (alias core export $libc "mem" (core memory $mem))
  (alias core export $libc "realloc" (core func $realloc))

  (core func $get-dirs (canon lower (func $p "get-directories") (memory $mem) (realloc $realloc)))
  (core func $open-at (canon lower (func $t "[method]descriptor.open-at") (memory $mem) (realloc $realloc)))
  (core func $read (canon lower (func $t "[method]descriptor.read") (memory $mem) (realloc $realloc)))
  (core func $write (canon lower (func $t "[method]descriptor.write") (memory $mem) (realloc $realloc)))

  (core module $m
    (import "libc" "mem" (memory 1))
    (import "wasi" "get-dirs" (func $get-dirs (param i32)))
    (import "wasi" "open-at" (func $open-at (param i32 i32 i32 i32 i32 i32 i32)))
    (import "wasi" "read" (func $read (param i32 i64 i64 i32)))
    (import "wasi" "write" (func $write (param i32 i32 i32 i64 i32)))
    ;; scratch: 100 dirs list, 200 open result, 400 read/write result, 600 export result
    (func $root-dir (result i32)
      (call $get-dirs (i32.const 100))
      (i32.load (i32.load (i32.const 100))))
    ;; fail copies the error-code byte at $at into the export's result,
    ;; whose payload sits at 600+$off.
    (func $fail (param $at i32) (param $off i32) (result i32)
      (i32.store8 (i32.const 600) (i32.const 1))
      (i32.store8 (i32.add (i32.const 600) (local.get $off)) (i32.load8_u (local.get $at)))
      (i32.const 600))
    (func (export "read-file") (param $p i32) (param $l i32) (result i32)
      (call $open-at (call $root-dir) (i32.const 1) (local.get $p) (local.get $l)
        (i32.const 0) (i32.const 1) (i32.const 200))
      (if (i32.load8_u (i32.const 200)) (then (return (call $fail (i32.const 204) (i32.const 4)))))
      (call $read (i32.load (i32.const 204)) (i64.const 4096) (i64.const 0) (i32.const 400))
      (if (i32.load8_u (i32.const 400)) (then (return (call $fail (i32.const 404) (i32.const 4)))))
      (i32.store8 (i32.const 600) (i32.const 0))
      (i32.store (i32.const 604) (i32.load (i32.const 404)))
      (i32.store (i32.const 608) (i32.load (i32.const 408)))
      (i32.const 600))
    (func (export "write-file") (param $p i32) (param $l i32) (param $dp i32) (param $dl i32) (result i32)
      (call $open-at (call $root-dir) (i32.const 1) (local.get $p) (local.get $l)
        (i32.const 9) (i32.const 2) (i32.const 200))
      (if (i32.load8_u (i32.const 200)) (then (return (call $fail (i32.const 204) (i32.const 8)))))
      (call $write (i32.load (i32.const 204)) (local.get $dp) (local.get $dl) (i64.const 0) (i32.const 400))
      (if (i32.load8_u (i32.const 400)) (then (return (call $fail (i32.const 408) (i32.const 8)))))
      (i32.store8 (i32.const 600) (i32.const 0))
      (i64.store (i32.const 608) (i64.load (i32.const 408)))
      (i32.const 600))
  )
  (core instance $i (instantiate $m
    (with "libc" (instance $libc))
    (with "wasi" (instance
      (export "get-dirs" (func $get-dirs))
      (export "open-at" (func $open-at))
      (export "read" (func $read))
      (export "write" (func $write))))))
  (type $res-bytes (result (list u8) (error $errcode)))
  (type $res-u64 (result u64 (error $errcode)))
  (func (export "read-file") (param "path" string) (result $res-bytes)
    (canon lift (core func $i "read-file") (memory $mem) (realloc $realloc)))
  (func (export "write-file") (param "path" string) (param "data" (list u8)) (result $res-u64)
    (canon lift (core func $i "write-file") (memory $mem) (realloc $realloc)))
)
