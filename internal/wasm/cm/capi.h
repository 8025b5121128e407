// Declarations of the parts of wasmtime's C API (v39) that package cm uses.
//
// Written for this package from the ABI documented in wasmtime's public
// headers; no third-party header is included or copied. The static library
// comes from the wasmtime-go module (see docs/wasm.md). Types the package
// only passes around are left opaque; structs and unions whose fields we
// read or write must match the library's layout byte for byte (checked by
// TestABILayout).
#ifndef MUR_CM_CAPI_H
#define MUR_CM_CAPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct wasm_engine_t wasm_engine_t;
typedef struct wasm_config_t wasm_config_t;
typedef struct wasm_frame_t wasm_frame_t;
typedef struct wasmtime_error wasmtime_error_t;
typedef struct wasmtime_store wasmtime_store_t;
typedef struct wasmtime_context wasmtime_context_t;
typedef struct wasmtime_pooling_allocation_config_t wasmtime_pooling_allocation_config_t;

typedef struct wasm_byte_vec_t {
  size_t size;
  char *data;
} wasm_byte_vec_t;
typedef wasm_byte_vec_t wasm_name_t;

typedef struct wasm_frame_vec_t {
  size_t size;
  wasm_frame_t **data;
} wasm_frame_vec_t;

void wasm_byte_vec_new(wasm_byte_vec_t *out, size_t size, const char *data);
void wasm_byte_vec_new_uninitialized(wasm_byte_vec_t *out, size_t size);
void wasm_byte_vec_delete(wasm_byte_vec_t *v);
void wasm_frame_vec_delete(wasm_frame_vec_t *v);
uint32_t wasm_frame_func_index(const wasm_frame_t *f);
const wasm_name_t *wasmtime_frame_func_name(const wasm_frame_t *f);
const wasm_name_t *wasmtime_frame_module_name(const wasm_frame_t *f);

// Config and engine.
wasm_config_t *wasm_config_new(void);
wasm_engine_t *wasm_engine_new_with_config(wasm_config_t *config);
void wasm_engine_delete(wasm_engine_t *engine);
void wasmtime_engine_increment_epoch(wasm_engine_t *engine);
void wasmtime_config_epoch_interruption_set(wasm_config_t *, bool);
void wasmtime_config_consume_fuel_set(wasm_config_t *, bool);
void wasmtime_config_wasm_component_model_set(wasm_config_t *, bool);
void wasmtime_config_max_wasm_stack_set(wasm_config_t *, size_t);
void wasmtime_config_cranelift_opt_level_set(wasm_config_t *, uint8_t);
wasmtime_pooling_allocation_config_t *wasmtime_pooling_allocation_config_new(void);
void wasmtime_pooling_allocation_config_delete(wasmtime_pooling_allocation_config_t *);
void wasmtime_pooling_allocation_config_total_component_instances_set(wasmtime_pooling_allocation_config_t *, uint32_t);
void wasmtime_pooling_allocation_config_total_core_instances_set(wasmtime_pooling_allocation_config_t *, uint32_t);
void wasmtime_pooling_allocation_config_total_memories_set(wasmtime_pooling_allocation_config_t *, uint32_t);
void wasmtime_pooling_allocation_config_total_tables_set(wasmtime_pooling_allocation_config_t *, uint32_t);
void wasmtime_pooling_allocation_config_total_stacks_set(wasmtime_pooling_allocation_config_t *, uint32_t);
void wasmtime_pooling_allocation_config_max_memory_size_set(wasmtime_pooling_allocation_config_t *, size_t);
void wasmtime_pooling_allocation_strategy_set(wasm_config_t *, const wasmtime_pooling_allocation_config_t *);

// Errors.
wasmtime_error_t *wasmtime_error_new(const char *msg);
void wasmtime_error_delete(wasmtime_error_t *err);
void wasmtime_error_message(const wasmtime_error_t *err, wasm_name_t *out);
bool wasmtime_error_exit_status(const wasmtime_error_t *err, int *status);
void wasmtime_error_wasm_trace(const wasmtime_error_t *err, wasm_frame_vec_t *out);

wasmtime_error_t *wasmtime_wat2wasm(const char *wat, size_t len, wasm_byte_vec_t *out);

// Stores.
wasmtime_store_t *wasmtime_store_new(wasm_engine_t *engine, void *data, void (*finalizer)(void *));
wasmtime_context_t *wasmtime_store_context(wasmtime_store_t *store);
void wasmtime_store_limiter(wasmtime_store_t *store, int64_t memory_size, int64_t table_elements,
                            int64_t instances, int64_t tables, int64_t memories);
void wasmtime_store_delete(wasmtime_store_t *store);
void *wasmtime_context_get_data(const wasmtime_context_t *ctx);
wasmtime_error_t *wasmtime_context_set_fuel(wasmtime_context_t *ctx, uint64_t fuel);
wasmtime_error_t *wasmtime_context_get_fuel(const wasmtime_context_t *ctx, uint64_t *fuel);
void wasmtime_context_set_epoch_deadline(wasmtime_context_t *ctx, uint64_t ticks_beyond_current);

// Component types.
typedef struct wasmtime_component_t wasmtime_component_t;
typedef struct wasmtime_component_type_t wasmtime_component_type_t;
typedef struct wasmtime_component_instance_type wasmtime_component_instance_type_t;
typedef struct wasmtime_component_func_type_t wasmtime_component_func_type_t;
typedef struct wasmtime_component_resource_type wasmtime_component_resource_type_t;
typedef struct wasmtime_component_export_index_t wasmtime_component_export_index_t;
typedef struct wasmtime_component_linker_t wasmtime_component_linker_t;
typedef struct wasmtime_component_linker_instance_t wasmtime_component_linker_instance_t;
typedef struct wasmtime_component_resource_any wasmtime_component_resource_any_t;
typedef struct wasmtime_component_resource_host wasmtime_component_resource_host_t;

// wasmtime_component_item_t: a kind tag followed by a pointer-sized union.
// Only the kind and the instance/func pointers are read here.
#define MUR_ITEM_COMPONENT_INSTANCE 1
#define MUR_ITEM_COMPONENT_FUNC 3
#define MUR_ITEM_RESOURCE 4
typedef struct wasmtime_component_item_t {
  uint8_t kind;
  union {
    void *ptr;
    wasmtime_component_instance_type_t *component_instance;
    wasmtime_component_func_type_t *component_func;
    uint8_t valtype[16];
  } of;
} wasmtime_component_item_t;

wasmtime_error_t *wasmtime_component_new(const wasm_engine_t *engine, const uint8_t *buf, size_t len,
                                         wasmtime_component_t **out);
wasmtime_error_t *wasmtime_component_serialize(const wasmtime_component_t *c, wasm_byte_vec_t *out);
wasmtime_error_t *wasmtime_component_deserialize(const wasm_engine_t *engine, const uint8_t *buf, size_t len,
                                                 wasmtime_component_t **out);
wasmtime_error_t *wasmtime_component_deserialize_file(const wasm_engine_t *engine, const char *path,
                                                      wasmtime_component_t **out);
void wasmtime_component_delete(wasmtime_component_t *c);
wasmtime_component_type_t *wasmtime_component_type(const wasmtime_component_t *c);
void wasmtime_component_type_delete(wasmtime_component_type_t *t);
size_t wasmtime_component_type_import_count(const wasmtime_component_type_t *t, const wasm_engine_t *e);
bool wasmtime_component_type_import_nth(const wasmtime_component_type_t *t, const wasm_engine_t *e, size_t nth,
                                        const char **name, size_t *name_len, wasmtime_component_item_t *out);
size_t wasmtime_component_type_export_count(const wasmtime_component_type_t *t, const wasm_engine_t *e);
bool wasmtime_component_type_export_nth(const wasmtime_component_type_t *t, const wasm_engine_t *e, size_t nth,
                                        const char **name, size_t *name_len, wasmtime_component_item_t *out);
size_t wasmtime_component_instance_type_export_count(const wasmtime_component_instance_type_t *t,
                                                     const wasm_engine_t *e);
bool wasmtime_component_instance_type_export_nth(const wasmtime_component_instance_type_t *t,
                                                 const wasm_engine_t *e, size_t nth, const char **name,
                                                 size_t *name_len, wasmtime_component_item_t *out);
void wasmtime_component_item_delete(wasmtime_component_item_t *item);
wasmtime_component_export_index_t *wasmtime_component_get_export_index(
    const wasmtime_component_t *c, const wasmtime_component_export_index_t *instance, const char *name,
    size_t name_len);
void wasmtime_component_export_index_delete(wasmtime_component_export_index_t *idx);
wasmtime_component_resource_type_t *wasmtime_component_resource_type_new_host(uint32_t ty);
void wasmtime_component_resource_type_delete(wasmtime_component_resource_type_t *t);
size_t wasmtime_component_func_type_param_count(const wasmtime_component_func_type_t *t);

// Instances and functions.
typedef struct wasmtime_component_instance {
  uint64_t store_id;
  uint32_t private_;
} wasmtime_component_instance_t;

typedef struct wasmtime_component_func {
  struct {
    uint64_t store_id;
    uint32_t private1;
  } inner;
  uint32_t private2;
} wasmtime_component_func_t;

bool wasmtime_component_instance_get_func(const wasmtime_component_instance_t *inst, wasmtime_context_t *ctx,
                                          const wasmtime_component_export_index_t *idx,
                                          wasmtime_component_func_t *out);

// Values. The layout mirrors wasmtime_component_val_t: a one-byte kind and a
// 24-byte union at offset 8 (the variant case, a name plus a pointer, is the
// largest member).
typedef struct mur_vec {
  size_t size;
  void *data;
} mur_vec;

typedef struct wasmtime_component_val {
  uint8_t kind;
  union {
    bool boolean;
    int8_t s8;
    uint8_t u8;
    int16_t s16;
    uint16_t u16;
    int32_t s32;
    uint32_t u32;
    int64_t s64;
    uint64_t u64;
    float f32;
    double f64;
    uint32_t character;
    wasm_name_t string;
    mur_vec list;
    struct {
      wasm_name_t discriminant;
      struct wasmtime_component_val *val;
    } variant;
    struct wasmtime_component_val *option;
    struct {
      bool is_ok;
      struct wasmtime_component_val *val;
    } result;
    wasmtime_component_resource_any_t *resource;
  } of;
} wasmtime_component_val_t;

typedef struct wasmtime_component_valrecord_entry {
  wasm_name_t name;
  wasmtime_component_val_t val;
} wasmtime_component_valrecord_entry_t;

void wasmtime_component_vallist_new_uninit(mur_vec *out, size_t size);
void wasmtime_component_valrecord_new_uninit(mur_vec *out, size_t size);
void wasmtime_component_valtuple_new_uninit(mur_vec *out, size_t size);
void wasmtime_component_valflags_new_uninit(mur_vec *out, size_t size);
wasmtime_component_val_t *wasmtime_component_val_new(wasmtime_component_val_t *val);
void wasmtime_component_val_free(wasmtime_component_val_t *ptr);
void wasmtime_component_val_delete(wasmtime_component_val_t *val);

wasmtime_component_resource_any_t *wasmtime_component_resource_any_clone(
    const wasmtime_component_resource_any_t *r);
bool wasmtime_component_resource_any_owned(const wasmtime_component_resource_any_t *r);
wasmtime_error_t *wasmtime_component_resource_any_drop(wasmtime_context_t *ctx,
                                                       const wasmtime_component_resource_any_t *r);
void wasmtime_component_resource_any_delete(wasmtime_component_resource_any_t *r);
wasmtime_component_resource_host_t *wasmtime_component_resource_host_new(bool owned, uint32_t rep, uint32_t ty);
uint32_t wasmtime_component_resource_host_rep(const wasmtime_component_resource_host_t *r);
uint32_t wasmtime_component_resource_host_type(const wasmtime_component_resource_host_t *r);
bool wasmtime_component_resource_host_owned(const wasmtime_component_resource_host_t *r);
void wasmtime_component_resource_host_delete(wasmtime_component_resource_host_t *r);
wasmtime_error_t *wasmtime_component_resource_any_to_host(wasmtime_context_t *ctx,
                                                          const wasmtime_component_resource_any_t *r,
                                                          wasmtime_component_resource_host_t **out);
wasmtime_error_t *wasmtime_component_resource_host_to_any(wasmtime_context_t *ctx,
                                                          const wasmtime_component_resource_host_t *r,
                                                          wasmtime_component_resource_any_t **out);

wasmtime_error_t *wasmtime_component_func_call(const wasmtime_component_func_t *f, wasmtime_context_t *ctx,
                                               const wasmtime_component_val_t *args, size_t nargs,
                                               wasmtime_component_val_t *results, size_t nresults);
wasmtime_error_t *wasmtime_component_func_post_return(const wasmtime_component_func_t *f,
                                                      wasmtime_context_t *ctx);


// wasmtime_component_valtype_t: a kind tag and a pointer-sized union; only
// deleted here, never inspected.
typedef struct wasmtime_component_valtype_t {
  uint8_t kind;
  void *of;
} wasmtime_component_valtype_t;
void wasmtime_component_valtype_delete(wasmtime_component_valtype_t *t);
wasmtime_component_func_type_t *wasmtime_component_func_type(const wasmtime_component_func_t *f,
                                                              wasmtime_context_t *ctx);
void wasmtime_component_func_type_delete(wasmtime_component_func_type_t *t);
bool wasmtime_component_func_type_result(const wasmtime_component_func_type_t *t,
                                         wasmtime_component_valtype_t *out);
wasm_engine_t *wasmtime_engine_clone(wasm_engine_t *engine);
typedef uint8_t wasmtime_update_deadline_kind_t;
void wasmtime_store_epoch_deadline_callback(wasmtime_store_t *store,
                                            wasmtime_error_t *(*func)(wasmtime_context_t *, void *, uint64_t *,
                                                                      wasmtime_update_deadline_kind_t *),
                                            void *data, void (*finalizer)(void *));

// Linker.
typedef wasmtime_error_t *(*wasmtime_component_func_callback_t)(void *, wasmtime_context_t *,
                                                                const wasmtime_component_func_type_t *,
                                                                wasmtime_component_val_t *, size_t,
                                                                wasmtime_component_val_t *, size_t);
typedef wasmtime_error_t *(*wasmtime_component_resource_destructor_t)(void *, wasmtime_context_t *, uint32_t);

wasmtime_component_linker_t *wasmtime_component_linker_new(const wasm_engine_t *engine);
wasmtime_component_linker_instance_t *wasmtime_component_linker_root(wasmtime_component_linker_t *l);
wasmtime_error_t *wasmtime_component_linker_instantiate(const wasmtime_component_linker_t *l,
                                                        wasmtime_context_t *ctx, const wasmtime_component_t *c,
                                                        wasmtime_component_instance_t *out);
void wasmtime_component_linker_delete(wasmtime_component_linker_t *l);
wasmtime_error_t *wasmtime_component_linker_instance_add_instance(wasmtime_component_linker_instance_t *li,
                                                                  const char *name, size_t name_len,
                                                                  wasmtime_component_linker_instance_t **out);
wasmtime_error_t *wasmtime_component_linker_instance_add_func(wasmtime_component_linker_instance_t *li,
                                                              const char *name, size_t name_len,
                                                              wasmtime_component_func_callback_t cb, void *data,
                                                              void (*finalizer)(void *));
wasmtime_error_t *wasmtime_component_linker_instance_add_resource(
    wasmtime_component_linker_instance_t *li, const char *name, size_t name_len,
    const wasmtime_component_resource_type_t *ty, wasmtime_component_resource_destructor_t dtor, void *data,
    void (*finalizer)(void *));
void wasmtime_component_linker_instance_delete(wasmtime_component_linker_instance_t *li);

// Custom linear memories (memory.go): wasmtime's memory-creator hooks.
typedef struct wasm_memorytype_t wasm_memorytype_t;
typedef struct wasmtime_linear_memory {
  void *env;
  uint8_t *(*get_memory)(void *env, size_t *byte_size, size_t *byte_capacity);
  wasmtime_error_t *(*grow_memory)(void *env, size_t new_size);
  void (*finalizer)(void *);
} wasmtime_linear_memory_t;
typedef struct wasmtime_memory_creator {
  void *env;
  wasmtime_error_t *(*new_memory)(void *env, const wasm_memorytype_t *ty, size_t minimum, size_t maximum,
                                  size_t reserved_size_in_bytes, size_t guard_size_in_bytes,
                                  wasmtime_linear_memory_t *memory_ret);
  void (*finalizer)(void *);
} wasmtime_memory_creator_t;
void wasmtime_config_host_memory_creator_set(wasm_config_t *, wasmtime_memory_creator_t *);
void wasmtime_config_memory_init_cow_set(wasm_config_t *, bool);

// mur_mem_account is one store's linear-memory budget, shared by all the
// memories created while that store instantiates.
typedef struct mur_mem_account {
  int64_t limit; // bytes, or -1
  int64_t used;
  int32_t hit;   // a creation or growth was refused for the limit
} mur_mem_account;

// Helpers defined in ffi.go's preamble.
void mur_use_memory_creator(wasm_config_t *config);
wasmtime_error_t *mur_instantiate(mur_mem_account *acct, const wasmtime_component_linker_t *l,
                                  wasmtime_context_t *ctx, const wasmtime_component_t *c,
                                  wasmtime_component_instance_t *out);
wasmtime_error_t *mur_add_func(wasmtime_component_linker_instance_t *li, const char *name, size_t len,
                               uintptr_t data);
wasmtime_error_t *mur_add_resource(wasmtime_component_linker_instance_t *li, const char *name, size_t len,
                                   uint32_t ty, uintptr_t data);
wasmtime_store_t *mur_store_new(wasm_engine_t *engine, uintptr_t data);
uintptr_t mur_store_data(const wasmtime_context_t *ctx);
size_t mur_sizeof_val(void);
size_t mur_sizeof_entry(void);
size_t mur_sizeof_item(void);

#endif
