module github.com/tasksim/tasksim

go 1.26

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/spf13/pflag v1.1.0
)

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0 // indirect
	github.com/mark3labs/mcp-go v1.2.1 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/text v0.14.0 // indirect
)
