;; Moves bytes through a wasi:io/streams-shaped import, the way guests use
;; streams: pump(n, size, off) writes `size` bytes of its memory from
;; 0x20000+off n times (an odd off is a write from an odd address),
;; drain(n, size) reads n chunks; both return the byte sum seen, so a
;; mangled byte shows. The memory at 0x20000 holds every byte value.
(component
  (type $streams (instance
    (type $bytes (list u8))
    (type $res (result $bytes))
    (export "write" (func (param "contents" $bytes) (result u32)))
    (export "read" (func (param "len" u64) (result $res)))
  ))
  (import "wasi:io/streams@0.2.3" (instance $s (type $streams)))
  (core module $libc
    (memory (export "mem") 5)
    (func (export "realloc") (param i32 i32 i32 i32) (result i32) (i32.const 0x30000))
    (func (export "init")
      (local $i i32)
      (loop
        (i32.store8 (i32.add (i32.const 0x20000) (local.get $i)) (local.get $i))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if 0 (i32.lt_u (local.get $i) (i32.const 0x10000))))))
  (core instance $libc (instantiate $libc))
  (alias core export $libc "mem" (core memory $mem))
  (alias core export $libc "realloc" (core func $realloc))
  (core func $write (canon lower (func $s "write") (memory $mem)))
  (core func $read (canon lower (func $s "read") (memory $mem) (realloc $realloc)))
  (core module $m
    (import "libc" "mem" (memory 1))
    (import "libc" "init" (func $init))
    (import "s" "write" (func $write (param i32 i32) (result i32)))
    (import "s" "read" (func $read (param i64 i32)))
    (func $sum (param $p i32) (param $n i32) (result i64)
      (local $t i64)
      (block (loop
        (br_if 1 (i32.eqz (local.get $n)))
        (local.set $t (i64.add (local.get $t) (i64.load8_u (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br 0)))
      (local.get $t))
    (func (export "pump") (param $n i32) (param $size i32) (param $off i32) (result i64)
      (local $t i64)
      (call $init)
      (block (loop
        (br_if 1 (i32.eqz (local.get $n)))
        (local.set $t (i64.add (local.get $t)
          (i64.extend_i32_u (call $write (i32.add (i32.const 0x20000) (local.get $off)) (local.get $size)))))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br 0)))
      (local.get $t))
    (func (export "drain") (param $n i32) (param $size i32) (result i64)
      (local $t i64)
      (block (loop
        (br_if 1 (i32.eqz (local.get $n)))
        (call $read (i64.extend_i32_u (local.get $size)) (i32.const 0x100))
        (if (i32.load8_u (i32.const 0x100)) (then unreachable))
        (local.set $t (i64.add (local.get $t)
          (call $sum (i32.load (i32.const 0x104)) (i32.load (i32.const 0x108)))))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br 0)))
      (local.get $t))
  )
  (core instance $i (instantiate $m
    (with "libc" (instance $libc))
    (with "s" (instance (export "write" (func $write)) (export "read" (func $read))))))
  (func (export "pump") (param "n" u32) (param "size" u32) (param "off" u32) (result u64) (canon lift (core func $i "pump")))
  (func (export "drain") (param "n" u32) (param "size" u32) (result u64) (canon lift (core func $i "drain")))
)
