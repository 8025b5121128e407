;; A guest that reads a file to its end through wasi:io streams, for the
;; end-to-end throughput benchmark: drain(path, chunk) opens path under the
;; first preopen, takes read-via-stream(0) and calls blocking-read(chunk)
;; until the stream closes, returning the byte count (or 2^64-1 on an open
;; error); digest(path, chunk) returns the FNV-1a 64 of the bytes
;; instead. realloc hands every large allocation one fixed buffer (each
;; chunk is dropped before the next arrives, as a copying guest would reuse
;; its buffer) and bump-allocates small ones, starting over when the bump
;; area is used up (the preopen list is read before any chunk arrives).
(component $root
  (import "wasi:io/error@0.2.0" (instance $ioerr
    (export "error" (type (sub resource)))
  ))
  (alias export $ioerr "error" (type $error))
  (import "wasi:io/streams@0.2.0" (instance $streams
    (alias outer $root $error (type $e'))
    (export "error" (type $e (eq $e')))
    (export "input-stream" (type $in (sub resource)))
    (type $se' (variant (case "last-operation-failed" (own $e)) (case "closed")))
    (export "stream-error" (type $se (eq $se')))
    (export "[method]input-stream.blocking-read"
      (func (param "self" (borrow $in)) (param "len" u64) (result (result (list u8) (error $se)))))
  ))
  (alias export $streams "input-stream" (type $input-stream))
  (import "wasi:filesystem/types@0.2.0" (instance $t
    (export "descriptor" (type $d (sub resource)))
    (alias outer $root $input-stream (type $in'))
    (export "input-stream" (type $in (eq $in')))
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
    (export "[method]descriptor.read-via-stream" (func (param "self" (borrow $d)) (param "offset" u64)
      (result (result (own $in) (error $ec)))))
  ))
  (alias export $t "descriptor" (type $desc))
  (import "wasi:filesystem/preopens@0.2.0" (instance $p
    (alias outer $root $desc (type $d'))
    (export "descriptor" (type $d (eq $d')))
    (export "get-directories" (func (result (list (tuple (own $d) string)))))
  ))

  (core module $libc
    (memory (export "mem") 40)
    (global $bump (mut i32) (i32.const 1024))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      (if (i32.gt_u (local.get 3) (i32.const 1024)) (then (return (i32.const 65536))))
      (local.set $p (i32.and (i32.add (global.get $bump) (i32.const 7)) (i32.const -8)))
      ;; small chunks are not kept either: start over before the buffer
      (if (i32.gt_u (i32.add (local.get $p) (local.get 3)) (i32.const 65536))
        (then (local.set $p (i32.const 1024))))
      (global.set $bump (i32.add (local.get $p) (local.get 3)))
      (local.get $p))
  )
  (core instance $libc (instantiate $libc))
  (alias core export $libc "mem" (core memory $mem))
  (alias core export $libc "realloc" (core func $realloc))

  (core func $get-dirs (canon lower (func $p "get-directories") (memory $mem) (realloc $realloc)))
  (core func $open-at (canon lower (func $t "[method]descriptor.open-at") (memory $mem) (realloc $realloc)))
  (core func $read-via-stream (canon lower (func $t "[method]descriptor.read-via-stream") (memory $mem)))
  (core func $blocking-read (canon lower (func $streams "[method]input-stream.blocking-read") (memory $mem) (realloc $realloc)))

  (core module $m
    (import "libc" "mem" (memory 1))
    (import "w" "get-dirs" (func $get-dirs (param i32)))
    (import "w" "open-at" (func $open-at (param i32 i32 i32 i32 i32 i32 i32)))
    (import "w" "read-via-stream" (func $read-via-stream (param i32 i64 i32)))
    (import "w" "blocking-read" (func $blocking-read (param i32 i64 i32)))
    ;; scratch: 100 dirs, 200 open, 300 stream, 400 read result
    ;; each: drains path in chunk-byte reads; with $hash set it returns
    ;; the FNV-1a 64 of the bytes instead of their count.
    (func $each (param $p i32) (param $l i32) (param $chunk i64) (param $hash i32) (result i64)
      (local $total i64) (local $h i64) (local $in i32) (local $b i32) (local $e i32)
      (local.set $h (i64.const 0xcbf29ce484222325))
      (call $get-dirs (i32.const 100))
      (call $open-at (i32.load (i32.load (i32.const 100))) (i32.const 1) (local.get $p) (local.get $l)
        (i32.const 0) (i32.const 1) (i32.const 200))
      (if (i32.load8_u (i32.const 200)) (then (return (i64.const -1))))
      (call $read-via-stream (i32.load (i32.const 204)) (i64.const 0) (i32.const 300))
      (if (i32.load8_u (i32.const 300)) (then (return (i64.const -1))))
      (local.set $in (i32.load (i32.const 304)))
      (block $done
        (loop $next
          (call $blocking-read (local.get $in) (local.get $chunk) (i32.const 400))
          (br_if $done (i32.load8_u (i32.const 400)))
          (local.set $total (i64.add (local.get $total) (i64.extend_i32_u (i32.load (i32.const 408)))))
          (if (local.get $hash)
            (then
              (local.set $b (i32.load (i32.const 404)))
              (local.set $e (i32.add (local.get $b) (i32.load (i32.const 408))))
              (block $hashed
                (loop $byte
                  (br_if $hashed (i32.ge_u (local.get $b) (local.get $e)))
                  (local.set $h (i64.mul
                    (i64.xor (local.get $h) (i64.load8_u (local.get $b)))
                    (i64.const 0x100000001b3)))
                  (local.set $b (i32.add (local.get $b) (i32.const 1)))
                  (br $byte)))))
          (br $next)))
      (select (local.get $h) (local.get $total) (local.get $hash)))
    (func (export "drain") (param i32 i32 i64) (result i64)
      (call $each (local.get 0) (local.get 1) (local.get 2) (i32.const 0)))
    (func (export "digest") (param i32 i32 i64) (result i64)
      (call $each (local.get 0) (local.get 1) (local.get 2) (i32.const 1)))
  )
  (core instance $i (instantiate $m
    (with "libc" (instance $libc))
    (with "w" (instance
      (export "get-dirs" (func $get-dirs))
      (export "open-at" (func $open-at))
      (export "read-via-stream" (func $read-via-stream))
      (export "blocking-read" (func $blocking-read))))))
  (func (export "drain") (param "path" string) (param "chunk" u64) (result u64)
    (canon lift (core func $i "drain") (memory $mem) (realloc $realloc)))
  (func (export "digest") (param "path" string) (param "chunk" u64) (result u64)
    (canon lift (core func $i "digest") (memory $mem) (realloc $realloc)))
)
