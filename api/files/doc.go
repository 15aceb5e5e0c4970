// Package files serves the Web UI's upload and workspace actions under
// /agentengine/api/v1/<Action>, in the action API's envelope:
//
//   - UploadFile (POST multipart "file"): streams into the upload store and answers
//     {FileData{fileUri, displayName, mimeType, sizeBytes}}; 413 over the limit.
//   - AttachmentContent (GET FileUri): the upload's bytes. Only raster images and
//     PDFs are inline; everything is nosniff and (but PDFs) under a sandbox CSP.
//   - ListWorkspaceFiles (POST JSON or GET query: AgentId, Path, Recursive),
//     GetWorkspaceFileContent (GET FilePath), AddWorkspaceFile (POST multipart "file"
//     and Path), DeleteWorkspaceFile (POST JSON Path), ExportWorkspaceZip (GET Path).
//
// Upload ids and workspace paths never reach the file system unchecked: ids must be
// 32 lowercase hex characters, paths go through workspace.Clean and an os.Root.
package files
