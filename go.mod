module github.com/tasksim/tasksim

go 1.26

require (
	github.com/mark3labs/mcp-go v1.2.1 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
	golang.org/x/text v0.14.0 // indirect
)
