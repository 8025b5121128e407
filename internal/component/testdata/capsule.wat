;; A script capsule in component text: it exports murmur:capsule/run@0.1.0
;; and its run calls murmur:tool-registry/invoke@0.1.0 with
;; invoke("echo", {data: some("ping")}). It traps unless the call returns
;; ok with status passed and data "ping" back, so the host sees whether the
;; import round trip worked.
(component
  (import "murmur:tool-registry/invoke@0.1.0" (instance $reg
    (type $st (enum "passed" "failed" "error"))
    (export "status" (type $st-e (eq $st)))
    (type $in (record (field "data" (option string)) (field "log-path" (option string))))
    (export "tool-input" (type $in-e (eq $in)))
    (type $res (record (field "status" $st-e) (field "summary" (option string)) (field "data" (option string))
      (field "data-path" (option string)) (field "truncated" bool) (field "metadata" (list (tuple string string)))))
    (export "tool-result" (type $res-e (eq $res)))
    (export "invoke" (func (param "name" string) (param "input" $in-e) (result (result $res-e (error string)))))
  ))
  (core module $libc
    (memory (export "mem") 1)
    (global $bump (mut i32) (i32.const 8192))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      global.get $bump
      i32.const 7 i32.add i32.const -8 i32.and
      local.tee $p
      local.get 3 i32.add
      global.set $bump
      local.get $p))
  (core instance $libc (instantiate $libc))
  (alias core export $libc "mem" (core memory $mem))
  (alias core export $libc "realloc" (core func $realloc))
  (core func $invoke (canon lower (func $reg "invoke") (memory $mem) (realloc $realloc)))
  (core module $m
    (import "libc" "mem" (memory 1))
    (import "reg" "invoke" (func $invoke (param i32 i32 i32 i32 i32 i32 i32 i32 i32)))
    (data (i32.const 1000) "echo")
    (data (i32.const 1010) "ping")
    (func (export "run")
      ;; invoke("echo", {data: some("ping"), log-path: none}) -> result at 2000
      (call $invoke (i32.const 1000) (i32.const 4)
        (i32.const 1) (i32.const 1010) (i32.const 4)
        (i32.const 0) (i32.const 0) (i32.const 0)
        (i32.const 2000))
      (if (i32.load8_u (i32.const 2000)) (then unreachable))          ;; err
      (if (i32.load8_u (i32.const 2004)) (then unreachable))          ;; status != passed
      (if (i32.eqz (i32.load8_u (i32.const 2020))) (then unreachable)) ;; data none
      (if (i32.ne (i32.load (i32.const 2028)) (i32.const 4)) (then unreachable))
      (if (i32.ne (i32.load (i32.load (i32.const 2024))) (i32.load (i32.const 1010))) (then unreachable))))
  (core instance $ri (export "invoke" (func $invoke)))
  (core instance $i (instantiate $m (with "libc" (instance $libc)) (with "reg" (instance $ri))))
  (func $run (canon lift (core func $i "run")))
  (instance $cap (export "run" (func $run)))
  (export "murmur:capsule/run@0.1.0" (instance $cap))
)
