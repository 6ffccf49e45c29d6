package mcptest

import "github.com/tasksim/tasksim/internal/schema"

// The validators are package schema's (internal/schema), which the contract suite uses in
// production too: one embedded copy of each official schema. mcptest names them for tests,
// beside Must and MustFail.

// Version is the protocol revision of the schema behind New, Validate, ValidateReply and
// ValidateMessage.
const Version = schema.Version

// Version2026 is the protocol revision of the core schema behind New2026 and Validate2026.
const Version2026 = schema.Version2026

// ExtTasks names the schema of the Tasks extension, behind NewExt and ValidateExt.
const ExtTasks = schema.ExtTasks

// Schema is one compiled official schema (schema.Schema).
type Schema = schema.Schema

// SchemaError reports JSON text that a schema, or a rule checked on top of it, rejects
// (schema.Error).
type SchemaError = schema.Error

// New compiles the embedded 2025-11-25 schema (schema.New).
func New() (*Schema, error) { return schema.New() }

// New2026 compiles the embedded core schema of 2026-07-28 (schema.New2026).
func New2026() (*Schema, error) { return schema.New2026() }

// NewExt compiles the embedded schema of the Tasks extension (schema.NewExt).
func NewExt() (*Schema, error) { return schema.NewExt() }

// Validate checks raw against #/$defs/<def> of 2025-11-25 (schema.Validate).
func Validate(def string, raw []byte) error { return schema.Validate(def, raw) }

// Validate2026 checks raw against #/$defs/<def> of 2026-07-28 (schema.Validate2026).
func Validate2026(def string, raw []byte) error { return schema.Validate2026(def, raw) }

// ValidateExt checks raw against #/$defs/<def> of the Tasks extension (schema.ValidateExt).
func ValidateExt(def string, raw []byte) error { return schema.ValidateExt(def, raw) }

// ValidateReply checks a whole 2025-11-25 response to method (schema.ValidateReply).
func ValidateReply(method string, raw []byte) error { return schema.ValidateReply(method, raw) }

// ValidateMessage checks any single 2025-11-25 JSON-RPC message (schema.ValidateMessage).
func ValidateMessage(raw []byte) error { return schema.ValidateMessage(raw) }

// ValidateReply2026 checks a whole 2026-07-28 response to method (schema.ValidateReply2026).
func ValidateReply2026(method string, raw []byte) error {
	return schema.ValidateReply2026(method, raw)
}

// ValidateMessage2026 checks any single 2026-07-28 JSON-RPC message
// (schema.ValidateMessage2026).
func ValidateMessage2026(raw []byte) error { return schema.ValidateMessage2026(raw) }
