# S3 client integration tests (owner: s3); filled in with lib/s3.
